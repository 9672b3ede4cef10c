"""The persistent background job queue: training never runs inside the Streamlit server.

A *job* is a command line (e.g. ``[sys.executable, "-m", "ltr", "train", ...]``) plus a resource
class (``cpu``, ``cuda:0``, ...), a label and a JSON ``meta`` (e.g. the run ids it will produce).
Jobs live in ``cache/jobs.sqlite``; their output goes to ``cache/jobs/<id>.log``.

Life cycle::

    submit() -> queued --worker--> running --process exits 0--> completed
                  |                   |------exits != 0 / dies--> failed (exit code + log tail)
                  +--cancel()--> cancelled <--cancel(): SIGTERM to the process group

Who does what:

- Pages call :func:`submit`, :func:`list_jobs`, :func:`cancel` and :func:`ensure_worker`; none of
  them waits for a job.
- One detached *worker* (``python -m core.jobs worker``, started by :func:`ensure_worker` in its own
  session so that it outlives the Streamlit server) loops: it reaps jobs whose process ended
  (exit code from the job's exit file, else "process died"), escalates cancelled jobs that ignore
  SIGTERM to SIGKILL, and starts queued jobs while each resource class is under its concurrency
  limit. It exits after ``idle_exit`` seconds without queued or running jobs. A single instance
  is guaranteed by an ``fcntl`` lock on ``cache/jobs/worker.lock`` (released by the kernel when the
  worker dies, so a crashed worker never blocks the next one).
- Jobs are started in a new session (``start_new_session=True``) so that neither a closed browser
  tab nor a restarted Streamlit server or worker stops them; a new worker finds running jobs
  again by their pid (checked against the process start time, so a reused pid is not mistaken
  for the job).

Concurrency limits per resource class: by default 1 (one job per GPU, one on the CPU). Override
with ``IRDASH_JOB_LIMITS="cpu=2,cuda:0=1"`` or in ``irdash.toml``::

    [jobs]
    limits = { cpu = 2, "cuda:0" = 1 }

Executors. The worker talks to processes only through the :class:`Executor` protocol
(``launch``, ``is_alive``, ``exit_code``, ``terminate``) and stores the opaque ``handle`` string
that ``launch`` returns. :class:`LocalProcessExecutor` runs ``/bin/sh -c '"$@"; echo $? > exit'``
around the command, so the exit code survives a worker restart. A Ray executor would implement
the same four methods: ``launch`` submits a ``ray.remote`` task (with ``num_gpus`` from the
resource class) that runs the command and writes the same log, and returns the task id as the
handle; ``is_alive``/``exit_code`` read the task's state through ``ray.util.state``; ``terminate``
calls ``ray.cancel``. Selecting it would be a ``[jobs] executor = "ray"`` switch in
:func:`make_executor`; the queue, limits and pages stay unchanged.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Protocol, Sequence

from core.db import connect, transaction
from core.paths import PROJECT_ROOT, cache_dir, cache_subdir, load_config

JOB_STATUSES = ("queued", "running", "completed", "failed", "cancelled")
ACTIVE_STATUSES = ("queued", "running")
DEFAULT_LIMIT = 1
LOG_TAIL_CHARS = 4000
# A cancelled job still alive this long after its SIGTERM gets SIGKILL.
KILL_GRACE_SECONDS = 10.0
WORKER_POLL_SECONDS = 0.5
WORKER_IDLE_EXIT_SECONDS = 120.0
LIMITS_ENV = "IRDASH_JOB_LIMITS"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT NOT NULL,
    command_json TEXT NOT NULL,
    resource TEXT NOT NULL,
    status TEXT NOT NULL,
    handle TEXT,
    pid INTEGER,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    exit_code INTEGER,
    log_tail TEXT,
    meta_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, resource);
CREATE TABLE IF NOT EXISTS worker (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pid INTEGER,
    started REAL,
    heartbeat REAL
);
"""


class JobError(ValueError):
    """A job request that cannot be queued (empty command, unknown job id, ...)."""


@dataclass(frozen=True)
class Job:
    id: int
    label: str
    command: list[str]
    resource: str
    status: str
    created: float
    handle: str | None = None
    pid: int | None = None
    started: float | None = None
    finished: float | None = None
    exit_code: int | None = None
    log_tail: str | None = None
    meta: dict = field(default_factory=dict)

    @property
    def log_path(self) -> Path:
        return job_log_path(self.id)

    @property
    def exit_path(self) -> Path:
        return cache_subdir("jobs") / f"{self.id}.exit"

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES


def jobs_db_path() -> Path:
    return cache_dir() / "jobs.sqlite"


def job_log_path(job_id: int) -> Path:
    return cache_subdir("jobs") / f"{job_id}.log"


def _connect():
    conn = connect(jobs_db_path())
    conn.executescript(_SCHEMA)
    return conn


def _job_from_row(row) -> Job:
    return Job(id=row["id"], label=row["label"], command=json.loads(row["command_json"]),
               resource=row["resource"], status=row["status"], created=row["created"],
               handle=row["handle"], pid=row["pid"], started=row["started"], finished=row["finished"],
               exit_code=row["exit_code"], log_tail=row["log_tail"], meta=json.loads(row["meta_json"]))


def read_log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    """The last ``chars`` characters of a log file ('' when there is none)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 4 * chars))
            return fh.read().decode("utf-8", errors="replace")[-chars:]
    except FileNotFoundError:
        return ""


# ---------------------------------------------------------------------------- public API for pages
def submit(command: Sequence[str], *, label: str, resource: str = "cpu",
           meta: Mapping | None = None, start_worker: bool = True) -> int:
    """Queue ``command`` (an argv list run from the project root) and return the job id.

    The worker is started if none is alive, so the job runs even when nobody polls the page.
    """
    command = [str(c) for c in command]
    if not command:
        raise JobError("a job needs a non-empty command")
    if not (resource in ("cpu", "ray") or resource.startswith("cuda:")):
        raise JobError(f"unknown resource class {resource!r}: use 'cpu', 'cuda:N' or 'ray'")
    conn = _connect()
    try:
        with transaction(conn) as c:
            cur = c.execute(
                "INSERT INTO jobs (label, command_json, resource, status, created, meta_json)"
                " VALUES (?, ?, ?, 'queued', ?, ?)",
                (label, json.dumps(command), resource, time.time(), json.dumps(dict(meta or {}))))
            job_id = int(cur.lastrowid)
    finally:
        conn.close()
    if start_worker:
        ensure_worker()
    return job_id


def get_job(job_id: int) -> Job:
    conn = _connect()
    try:
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (int(job_id),)).fetchone()
    finally:
        conn.close()
    if row is None:
        raise JobError(f"no job with id {job_id}")
    return _job_from_row(row)


def list_jobs(*, status: str | Iterable[str] | None = None, limit: int | None = 200) -> list[Job]:
    """Jobs, newest first, optionally only those with the given status(es)."""
    sql, args = "SELECT * FROM jobs", []
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        sql += f" WHERE status IN ({','.join('?' * len(statuses))})"
        args += statuses
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    conn = _connect()
    try:
        return [_job_from_row(r) for r in conn.execute(sql, args).fetchall()]
    finally:
        conn.close()


def cancel(job_id: int, *, executor: "Executor | None" = None) -> str:
    """Cancel a job; returns its status afterwards.

    A queued job is simply marked cancelled. A running job's process group gets SIGTERM and the job
    is marked cancelled at once (the worker sends SIGKILL if it is still alive after
    ``KILL_GRACE_SECONDS``). A finished job is left as it is.
    """
    executor = executor or make_executor()
    conn = _connect()
    try:
        with transaction(conn) as c:
            row = c.execute("SELECT * FROM jobs WHERE id = ?", (int(job_id),)).fetchone()
            if row is None:
                raise JobError(f"no job with id {job_id}")
            job = _job_from_row(row)
            if not job.active:
                return job.status
            c.execute("UPDATE jobs SET status = 'cancelled', finished = ?, log_tail = ? WHERE id = ?",
                      (time.time(), read_log_tail(job.log_path) or None, job.id))
        if job.status == "running":
            executor.terminate(job)
        return "cancelled"
    finally:
        conn.close()


def worker_info() -> dict | None:
    """``{pid, started, heartbeat, alive}`` of the last worker, or None if none ever ran."""
    conn = _connect()
    try:
        row = conn.execute("SELECT pid, started, heartbeat FROM worker WHERE id = 1").fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    return {**dict(row), "alive": _worker_lock_held()}


def ensure_worker() -> int | None:
    """Start the detached worker unless one is alive; returns the new worker's pid (None if one ran).

    Two callers racing here may both spawn a worker; the loser fails to take the lock and exits.
    """
    if _worker_lock_held():
        return None
    env = dict(os.environ, IRDASH_CACHE_DIR=str(cache_dir()), PYTHONUNBUFFERED="1")
    with open(cache_subdir("jobs") / "worker.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "core.jobs", "worker"], cwd=PROJECT_ROOT, env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    return proc.pid


def resource_limits() -> dict[str, int]:
    """Concurrency limit per resource class from ``IRDASH_JOB_LIMITS`` or ``[jobs] limits``.

    Class ``ray`` (jobs that drive Ray tasks) defaults to :func:`core.ray_cluster.default_job_limit`.
    """
    from core.ray_cluster import default_job_limit

    limits = {"ray": default_job_limit()}
    limits.update({str(k): int(v) for k, v in load_config().get("jobs", {}).get("limits", {}).items()})
    spec = os.environ.get(LIMITS_ENV, "").strip()
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise JobError(f"{LIMITS_ENV}: expected 'class=N[,class=N]', got {item!r}")
        limits[name.strip()] = int(value)
    return limits


# ---------------------------------------------------------------------------- executors
class Executor(Protocol):
    """How the worker starts and watches a job's process (local today, Ray later)."""

    def launch(self, job: Job) -> tuple[str, int | None]:
        """Start the job; return ``(handle, pid)`` (pid None when not a local process)."""

    def is_alive(self, job: Job) -> bool: ...

    def exit_code(self, job: Job) -> int | None:
        """The exit code of a job that is no longer alive (None when unknown: the process died)."""

    def terminate(self, job: Job, *, kill: bool = False) -> None: ...


# Runs the command, then records its exit code atomically; SIGTERM/SIGKILL to the process group
# ends the shell too, so a killed job leaves no exit file.
_WRAPPER = '"$@"; code=$?; echo $code > "$IRDASH_JOB_EXIT.tmp" && mv "$IRDASH_JOB_EXIT.tmp" "$IRDASH_JOB_EXIT"'


def visible_device(index: str) -> str:
    """The ``CUDA_VISIBLE_DEVICES`` value for GPU ``index`` as this process numbers its GPUs.

    ``cuda:N`` counts the GPUs this process sees: under ``CUDA_VISIBLE_DEVICES=2,3`` (a shared
    machine), ``cuda:0`` is physical GPU 2, so the child must get ``2``, not ``0`` (a GPU excluded).
    """
    visible = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if visible and index.isdigit() and int(index) < len(visible):
        return visible[int(index)]
    return index


def _proc_start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks), None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            rest = fh.read().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if rest[0] == "Z" else rest[19]


class LocalProcessExecutor:
    """Jobs as local processes in their own session; handle = ``"<pid>:<start time>"``."""

    def __init__(self):
        self._children: dict[int, subprocess.Popen] = {}

    def launch(self, job: Job) -> tuple[str, int]:
        job.exit_path.unlink(missing_ok=True)
        env = dict(os.environ, IRDASH_CACHE_DIR=str(cache_dir()), PYTHONUNBUFFERED="1",
                   IRDASH_JOB_ID=str(job.id), IRDASH_JOB_EXIT=str(job.exit_path))
        if job.resource.startswith("cuda:"):
            env["CUDA_VISIBLE_DEVICES"] = visible_device(job.resource.split(":", 1)[1])
        with open(job.log_path, "ab") as log:
            proc = subprocess.Popen(["/bin/sh", "-c", _WRAPPER, "sh", *job.command], cwd=PROJECT_ROOT, env=env,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self._children[proc.pid] = proc
        return f"{proc.pid}:{_proc_start_time(proc.pid) or ''}", proc.pid

    def is_alive(self, job: Job) -> bool:
        pid, _, started = (job.handle or "").partition(":")
        if not pid.isdigit():
            return False
        child = self._children.get(int(pid))
        if child is not None and child.poll() is not None:  # our own child: poll() reaps the zombie
            del self._children[int(pid)]
            return False
        now_started = _proc_start_time(int(pid))
        return now_started is not None and (not started or now_started == started)

    def exit_code(self, job: Job) -> int | None:
        try:
            return int(job.exit_path.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def terminate(self, job: Job, *, kill: bool = False) -> None:
        if not self.is_alive(job):
            return
        pid = int(job.handle.partition(":")[0])
        try:
            # The shell leads its own session, so its pid is the process-group id of the whole job.
            os.killpg(pid, signal.SIGKILL if kill else signal.SIGTERM)
        except ProcessLookupError:
            pass


def make_executor() -> Executor:
    name = load_config().get("jobs", {}).get("executor", "local")
    if name != "local":
        raise JobError(f"[jobs] executor = {name!r}: only 'local' is implemented")
    return LocalProcessExecutor()


# ---------------------------------------------------------------------------- worker
def reap(executor: Executor) -> list[int]:
    """Finish running jobs whose process ended; SIGKILL cancelled jobs that outlived the grace.

    Returns the ids of the jobs that changed status.
    """
    conn = _connect()
    changed = []
    try:
        for row in conn.execute("SELECT * FROM jobs WHERE status = 'running'").fetchall():
            job = _job_from_row(row)
            if executor.is_alive(job):
                continue
            code = executor.exit_code(job)
            tail = read_log_tail(job.log_path)
            if code == 0:
                status = "completed"
            else:
                status = "failed"
                why = (f"exit code {code}" if code is not None
                       else "the process died without an exit code (killed?)")
                tail = (tail + ("\n" if tail and not tail.endswith("\n") else "") + f"[job runner] {why}")[-LOG_TAIL_CHARS:]
            with transaction(conn) as c:
                cur = c.execute("UPDATE jobs SET status = ?, finished = ?, exit_code = ?, log_tail = ?"
                                " WHERE id = ? AND status = 'running'", (status, time.time(), code, tail, job.id))
            if cur.rowcount:
                changed.append(job.id)
        horizon = time.time() - KILL_GRACE_SECONDS
        for row in conn.execute("SELECT * FROM jobs WHERE status = 'cancelled' AND handle IS NOT NULL"
                                " AND finished < ? AND finished > ?", (horizon, horizon - 3600)).fetchall():
            job = _job_from_row(row)
            if executor.is_alive(job):
                executor.terminate(job, kill=True)
    finally:
        conn.close()
    return changed


def start_queued(executor: Executor, limits: Mapping[str, int] | None = None) -> list[int]:
    """Launch queued jobs, oldest first, while their resource class has a free slot."""
    limits = resource_limits() if limits is None else dict(limits)
    conn = _connect()
    started = []
    try:
        running: dict[str, int] = {}
        for row in conn.execute("SELECT resource, COUNT(*) AS n FROM jobs WHERE status = 'running' GROUP BY resource"):
            running[row["resource"]] = row["n"]
        for row in conn.execute("SELECT * FROM jobs WHERE status = 'queued' ORDER BY id").fetchall():
            job = _job_from_row(row)
            if running.get(job.resource, 0) >= limits.get(job.resource, DEFAULT_LIMIT):
                continue
            # Claim the job first, so a concurrent cancel() either wins (we skip it) or sees it running.
            with transaction(conn) as c:
                claimed = c.execute("UPDATE jobs SET status = 'running', started = ? WHERE id = ? AND status = 'queued'",
                                    (time.time(), job.id)).rowcount
            if not claimed:
                continue
            try:
                handle, pid = executor.launch(job)
            except OSError as exc:
                with transaction(conn) as c:
                    c.execute("UPDATE jobs SET status = 'failed', finished = ?, log_tail = ? WHERE id = ?",
                              (time.time(), f"[job runner] could not start: {exc}", job.id))
                continue
            with transaction(conn) as c:
                c.execute("UPDATE jobs SET handle = ?, pid = ? WHERE id = ?", (handle, pid, job.id))
                status = c.execute("SELECT status FROM jobs WHERE id = ?", (job.id,)).fetchone()["status"]
            if status == "cancelled":  # cancelled between the claim and the launch
                executor.terminate(_job_from_row({**dict(row), "handle": handle}))
            running[job.resource] = running.get(job.resource, 0) + 1
            started.append(job.id)
    finally:
        conn.close()
    return started


def _active_count() -> int:
    conn = _connect()
    try:
        return conn.execute("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')").fetchone()[0]
    finally:
        conn.close()


def _lock_path() -> Path:
    return cache_subdir("jobs") / "worker.lock"


def _try_lock():
    fh = open(_lock_path(), "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    return fh


def _worker_lock_held() -> bool:
    fh = _try_lock()
    if fh is None:
        return True
    fh.close()  # closing releases the probe lock
    return False


def _beat(started: float) -> None:
    conn = _connect()
    try:
        with transaction(conn) as c:
            c.execute("INSERT INTO worker (id, pid, started, heartbeat) VALUES (1, ?, ?, ?) ON CONFLICT(id) DO UPDATE"
                      " SET pid = excluded.pid, started = excluded.started, heartbeat = excluded.heartbeat",
                      (os.getpid(), started, time.time()))
    finally:
        conn.close()


def run_worker(*, idle_exit: float = WORKER_IDLE_EXIT_SECONDS, poll: float = WORKER_POLL_SECONDS,
               executor: Executor | None = None) -> int:
    """The worker loop (see the module docstring). Returns 0, or 1 when another worker holds the lock."""
    lock = _try_lock()
    if lock is None:
        return 1
    executor = executor or make_executor()
    started = time.time()
    idle_since = time.monotonic()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    try:
        while not stop:
            reap(executor)
            start_queued(executor)
            _beat(started)
            if _active_count():
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > idle_exit:
                # Release first, then look again: a job submitted meanwhile either is seen here or
                # its submit() finds the lock free and starts a new worker.
                lock.close()
                if not _active_count():
                    return 0
                lock = _try_lock()
                if lock is None:
                    return 0
                idle_since = time.monotonic()
            time.sleep(poll)
        return 0
    finally:
        if lock is not None:
            lock.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.jobs", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker", help="run the job worker in the foreground")
    w.add_argument("--idle-exit", type=float, default=WORKER_IDLE_EXIT_SECONDS,
                   help="seconds without queued or running jobs before the worker exits")
    w.add_argument("--poll", type=float, default=WORKER_POLL_SECONDS)
    ls = sub.add_parser("list", help="print the jobs, newest first")
    ls.add_argument("--limit", type=int, default=50)
    c = sub.add_parser("cancel", help="cancel a job")
    c.add_argument("job_id", type=int)
    args = parser.parse_args(argv)
    if args.cmd == "worker":
        return run_worker(idle_exit=args.idle_exit, poll=args.poll)
    if args.cmd == "list":
        for job in list_jobs(limit=args.limit):
            print(f"{job.id:>5}  {job.status:<9}  {job.resource:<7}  {job.label}")
        return 0
    print(cancel(args.job_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
