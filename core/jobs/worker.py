"""The worker loop: reap ended jobs, escalate ignored cancels, start queued jobs within limits, idle exit."""
from __future__ import annotations

import os
import signal
import time
from typing import Mapping

from core.db import transaction
from core.jobs.executors import Executor, make_executor
from core.jobs.lock import try_lock
from core.jobs.queue import default_limit, resource_limits
from core.jobs.records import LOG_TAIL_CHARS, connect_jobs, job_from_row, read_log_tail

# A cancelled job still alive this long after its SIGTERM gets SIGKILL.
KILL_GRACE_SECONDS = 10.0
WORKER_POLL_SECONDS = 0.5
WORKER_IDLE_EXIT_SECONDS = 120.0


def reap(executor: Executor) -> list[int]:
    """Finish running jobs whose process ended; SIGKILL cancelled jobs that outlived the grace.

    Returns the ids of the jobs that changed status.
    """
    conn = connect_jobs()
    changed = []
    try:
        for row in conn.execute("SELECT * FROM jobs WHERE status = 'running'").fetchall():
            job = job_from_row(row)
            if job.handle is None and not job.exit_path.exists():
                # Claimed, but the worker that claimed it died before recording what it launched
                # (only the worker holding the lock claims, and this one holds it now): adopt the
                # process if it was started, else put the job back in the queue. Never "failed":
                # its trainer may be running.
                _recover_claim(conn, executor, job)
                continue
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
            job = job_from_row(row)
            if executor.is_alive(job):
                executor.terminate(job, kill=True)
    finally:
        conn.close()
    return changed


def _recover_claim(conn, executor: Executor, job) -> None:
    found = executor.adopt(job)
    with transaction(conn) as c:
        if found is not None:
            c.execute("UPDATE jobs SET handle = ?, pid = ? WHERE id = ? AND status = 'running' AND handle IS NULL",
                      (found[0], found[1], job.id))
        else:
            c.execute("UPDATE jobs SET status = 'queued', started = NULL WHERE id = ? AND status = 'running'"
                      " AND handle IS NULL", (job.id,))


def start_queued(executor: Executor, limits: Mapping[str, int] | None = None) -> list[int]:
    """Launch queued jobs, oldest first, while their resource class has a free slot."""
    limits = resource_limits() if limits is None else dict(limits)
    conn = connect_jobs()
    started = []
    try:
        running: dict[str, int] = {}
        for row in conn.execute("SELECT resource, COUNT(*) AS n FROM jobs WHERE status = 'running' GROUP BY resource"):
            running[row["resource"]] = row["n"]
        for row in conn.execute("SELECT * FROM jobs WHERE status = 'queued' ORDER BY id").fetchall():
            job = job_from_row(row)
            if running.get(job.resource, 0) >= limits.get(job.resource, default_limit(job.resource)):
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
                executor.terminate(job_from_row({**dict(row), "handle": handle}))
            running[job.resource] = running.get(job.resource, 0) + 1
            started.append(job.id)
    finally:
        conn.close()
    return started


def _active_count() -> int:
    conn = connect_jobs()
    try:
        return conn.execute("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')").fetchone()[0]
    finally:
        conn.close()



def _beat(started: float) -> None:
    conn = connect_jobs()
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
    lock = try_lock()
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
                lock = try_lock()
                if lock is None:
                    return 0
                idle_since = time.monotonic()
            time.sleep(poll)
        return 0
    finally:
        if lock is not None:
            lock.close()

