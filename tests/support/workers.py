"""Ending the job workers a test started. A worker is detached (``core.jobs.lock.ensure_worker``: its
parent is init), so it outlives the test, and the session, unless ended: the store keeps only the last
worker's pid, and a second one launched in a race takes the lock once the first is killed; one waiting on
jobs that a limit of 0 holds never goes idle. Workers are found by their command line and their cache
folder (``IRDASH_CACHE_DIR`` in their environment): only the workers of the tests' own caches are ended."""
from __future__ import annotations

import os
import signal
from pathlib import Path

WORKER_COMMAND = [b"-m", b"core.jobs", b"worker"]  # what ensure_worker launches after the interpreter


def _cache_of_worker(proc: Path) -> Path | None:
    """The cache folder of process ``proc`` (a /proc entry) when it is a job worker, else None."""
    try:
        if (proc / "cmdline").read_bytes().split(b"\0")[1:4] != WORKER_COMMAND:
            return None
        env = (proc / "environ").read_bytes().split(b"\0")
    except OSError:  # gone meanwhile, or not ours to read
        return None
    value = next((e.split(b"=", 1)[1] for e in env if e.startswith(b"IRDASH_CACHE_DIR=")), None)
    return Path(os.fsdecode(value)).resolve() if value else None


def end_workers_under(folder: Path) -> list[int]:
    """SIGKILL every job worker whose cache folder is ``folder`` or lies below it; their pids."""
    folder = Path(folder).resolve()
    ended = []
    for proc in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        cache = _cache_of_worker(proc)
        if cache is not None and cache.is_relative_to(folder):
            try:
                os.kill(int(proc.name), signal.SIGKILL)
                ended.append(int(proc.name))
            except ProcessLookupError:
                pass
    return ended
