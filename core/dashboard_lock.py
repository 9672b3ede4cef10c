"""One dashboard per store: the first ``streamlit run app.py`` on a cache folder claims it, a second one
says where the first runs (URL, pid) and shows nothing else.

Why: a second dashboard on the same store used to start silently on the next free port; two of them
each start workers, offer the same Start buttons and keep their own page state, and nothing said so.

The claim is an exclusive ``flock`` on ``<cache>/dashboard.lock``, held by the dashboard's process
for as long as it lives (the file descriptor is close-on-exec, so the jobs it starts do not hold it);
the file's JSON says who holds it (pid, its start time, port, URL, when). The kernel drops the lock
when that process dies, however it dies, so a lock left by a dead dashboard never blocks the next
one: only a live holder refuses. The app claims at its first script run (``app.py``; Streamlit runs
no code of ours before a browser connects), and ``python -m core.dashboard_lock`` (what ``make run``
calls first) says whether one already serves the store before a server is started.
"""
from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from core.paths import cache_dir
from core.processes import proc_start_time

LOCK_NAME = "dashboard.lock"
_held: dict[str, int] = {}  # lock path -> the descriptor this process holds it with (for its lifetime)


@dataclass(frozen=True)
class Holder:
    """The dashboard that holds a store: what its lock file says (None where it could not be read)."""

    pid: int | None
    url: str | None
    started: str | None
    store: str

    def message(self, own_port: int | None = None) -> str:
        where = self.url or "an address it has not written yet"
        who = f"pid {self.pid}" if self.pid else "pid unknown"
        since = f", since {self.started}" if self.started else ""
        own = f" This one (port {own_port}) shows nothing" if own_port else " This one shows nothing"
        return (f"A dashboard already serves this store ({self.store}): {where} ({who}{since}). Open that one."
                f"{own}, so that one dashboard starts the jobs and keeps the decisions; stop the other one "
                f"(kill {self.pid or 'PID'}) to serve the store from here.")


def lock_path() -> Path:
    return cache_dir() / LOCK_NAME


def dashboard_url(port: int | None, address: str | None = None, base_path: str | None = None) -> str:
    host = address if address and address not in ("0.0.0.0", "::") else "localhost"
    path = "/" + base_path.strip("/") if base_path and base_path.strip("/") else ""
    return f"http://{host}:{port}{path}"


def _read(path: Path) -> Holder:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    pid = info.get("pid") if isinstance(info.get("pid"), int) else None
    if pid and info.get("start_time") and proc_start_time(pid) != info.get("start_time"):
        pid = None  # the lock is held, but not by the process that wrote the file (a child of it, say)
    return Holder(pid=pid, url=info.get("url"), started=info.get("started"), store=str(path.parent))


def claim(url: str) -> Holder | None:
    """Claim this store for the dashboard of this process (at ``url``). None: this process holds it (now
    or since an earlier call); else the :class:`Holder`, a live dashboard that holds it."""
    path = lock_path()
    if str(path) in _held:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # non-inheritable: the jobs it starts do not hold it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise
        return _read(path)
    info = {"pid": os.getpid(), "start_time": proc_start_time(os.getpid()), "url": url,
            "started": dt.datetime.now().astimezone().isoformat(timespec="seconds")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode(), 0)
    os.fsync(fd)
    _held[str(path)] = fd
    return None


def release() -> None:
    """Let go of this process's claim on this store (a dashboard keeps it for life; tests let it go)."""
    fd = _held.pop(str(lock_path()), None)
    if fd is not None:
        os.close(fd)


def holder() -> Holder | None:
    """The live dashboard that holds this store, or None (nothing is claimed: the lock is let go again)."""
    path = lock_path()
    if str(path) in _held:
        return _read(path)
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return _read(path)
    finally:
        os.close(fd)  # closing drops a lock this call took
    return None


def main() -> int:
    """``python -m core.dashboard_lock``: exit 1 with where the running dashboard is, 0 when none is."""
    other = holder()
    if other is None:
        return 0
    print(f"error: {other.message()}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
