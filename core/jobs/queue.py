"""The queue API pages call: submit, look up, list and cancel jobs; worker status; concurrency limits."""
from __future__ import annotations

import json
import os
import time
from typing import Iterable, Mapping, Sequence

from core.db import transaction
from core.jobs.executors import Executor, make_executor
from core.jobs.lock import ensure_worker, worker_lock_held
from core.jobs.records import ACTIVE_STATUSES, LIMITS_ENV, Job, JobError, connect_jobs, job_from_row, read_log_tail
from core.paths import load_config


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
    conn = connect_jobs()
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
    conn = connect_jobs()
    try:
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (int(job_id),)).fetchone()
    finally:
        conn.close()
    if row is None:
        raise JobError(f"no job with id {job_id}")
    return job_from_row(row)


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
    conn = connect_jobs()
    try:
        return [job_from_row(r) for r in conn.execute(sql, args).fetchall()]
    finally:
        conn.close()


def cancel(job_id: int, *, executor: Executor | None = None) -> str:
    """Cancel a job; returns its status afterwards.

    A queued job is simply marked cancelled. A running job's process group gets SIGTERM and the job
    is marked cancelled at once (the worker sends SIGKILL if it is still alive after
    ``KILL_GRACE_SECONDS``). A finished job is left as it is.
    """
    executor = executor or make_executor()
    conn = connect_jobs()
    try:
        with transaction(conn) as c:
            row = c.execute("SELECT * FROM jobs WHERE id = ?", (int(job_id),)).fetchone()
            if row is None:
                raise JobError(f"no job with id {job_id}")
            job = job_from_row(row)
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
    conn = connect_jobs()
    try:
        row = conn.execute("SELECT pid, started, heartbeat FROM worker WHERE id = 1").fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    return {**dict(row), "alive": worker_lock_held()}



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



def keep_jobs_moving(job_list: Sequence[Job] | None = None) -> None:
    """Start the worker when jobs wait and none is alive (e.g. after a reboot).

    ``job_list``: only these jobs count (a page's own); None: every queued or running job.
    """
    if job_list is None:
        job_list = list_jobs(status=ACTIVE_STATUSES, limit=1)
    if any(j.active for j in job_list):
        ensure_worker()


def failure_message(log_tail: str | None) -> str:
    """The last line of a job's (or run's) output that says something, skipping the runner's own notes."""
    lines = [ln.strip() for ln in (log_tail or "").splitlines() if ln.strip() and not ln.startswith("[job runner]")]
    return lines[-1] if lines else (log_tail or "").strip()
