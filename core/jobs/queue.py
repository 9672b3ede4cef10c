"""The queue API pages call: submit, look up, list and cancel jobs; worker status; concurrency limits."""
from __future__ import annotations

import json
import os
import time
from typing import Iterable, Mapping, Sequence

from core.db import transaction
from core.jobs.executors import Executor, make_executor
from core.jobs.lock import ensure_worker, worker_lock_held
from core.jobs.records import (ACTIVE_STATUSES, DEFAULT_LIMIT, LIMITS_ENV, Job, JobError, connect_jobs, job_from_row,
                               read_log_tail)
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


def list_jobs(*, status: str | Iterable[str] | None = None, meta: Mapping | None = None,
              limit: int | None = 200) -> list[Job]:
    """Jobs, newest first, optionally only those with the given status(es) and ``meta`` fields
    (e.g. ``{"kind": "pipeline.retrieve", "dataset": "dl19"}``: a kind's jobs, however many newer
    jobs of other kinds the store holds)."""
    clauses, args = [], []
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        clauses.append(f"status IN ({','.join('?' * len(statuses))})")
        args += statuses
    for key, value in (meta or {}).items():
        clauses.append("json_extract(meta_json, ?) = ?")
        args += ['$."' + str(key).replace('"', '') + '"', value]
    sql = "SELECT * FROM jobs" + (" WHERE " + " AND ".join(clauses) if clauses else "") + " ORDER BY id DESC"
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



def default_limit(resource: str) -> int:
    """The limit of a class nobody set: 1, except ``ray`` (jobs that drive Ray tasks), which gets
    :func:`core.ray_cluster.default_job_limit`."""
    if resource == "ray":
        from core.ray_cluster import default_job_limit

        return default_job_limit()
    return DEFAULT_LIMIT


def resource_limits() -> dict[str, int]:
    """Concurrency limit per resource class (jobs at once; 0 = start none; unlisted classes 1).

    Later sources override earlier ones: ``[jobs] limits`` in ``irdash.toml``, then the limits set
    from the dashboard (:func:`set_limit`, kept in the jobs database), then ``IRDASH_JOB_LIMITS``.
    The worker reads them at every poll, so a change applies to the next job it starts. A class not
    listed gets :func:`default_limit`.
    """
    limits = {str(k): int(v) for k, v in load_config().get("jobs", {}).get("limits", {}).items()}
    conn = connect_jobs()
    try:
        limits.update({r["resource"]: int(r["n"]) for r in conn.execute("SELECT resource, n FROM limits")})
    finally:
        conn.close()
    spec = os.environ.get(LIMITS_ENV, "").strip()
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise JobError(f"{LIMITS_ENV}: expected 'class=N[,class=N]', got {item!r}")
        limits[name.strip()] = int(value)
    return limits


def set_limit(resource: str, n: int) -> None:
    """Set how many jobs may run at once on ``resource`` (from the dashboard; see :func:`resource_limits`)."""
    if not (resource == "cpu" or resource.startswith("cuda:")) or int(n) < 0:
        raise JobError(f"a limit is a resource class ('cpu', 'cuda:N') and a count >= 0, got {resource}={n}")
    conn = connect_jobs()
    try:
        with transaction(conn) as c:
            c.execute("INSERT INTO limits (resource, n) VALUES (?, ?) ON CONFLICT(resource) DO UPDATE SET n = excluded.n",
                      (resource, int(n)))
    finally:
        conn.close()


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def waiting_reasons(now: float | None = None) -> dict[int, str]:
    """Why each queued job waits, in words, keyed by job id, e.g.
    ``waiting for cpu: job #11, retrieve dense on dl19, running 12 min``.

    A job waits while its resource class is full (the jobs holding it are named, with how long
    they have run), behind older queued jobs of the same class, when the class's limit is 0, or
    for the worker to start.
    """
    now = time.time() if now is None else now
    active = sorted(list_jobs(status=ACTIVE_STATUSES, limit=None), key=lambda j: j.id)
    limits = resource_limits()
    worker_alive = worker_lock_held()
    out = {}
    for job in active:
        if job.status != "queued":
            continue
        limit = limits.get(job.resource, default_limit(job.resource))
        holders = [j for j in active if j.status == "running" and j.resource == job.resource]
        ahead = [j for j in active if j.status == "queued" and j.resource == job.resource and j.id < job.id]
        if limit == 0:
            out[job.id] = f"waiting: the {job.resource} limit is 0 (no job starts there; raise it to run)"
        elif len(holders) >= limit:
            held = "; ".join(f"job #{h.id}, {h.label}, running {_minutes(now - (h.started or now))}" for h in holders)
            out[job.id] = f"waiting for {job.resource}: {held}" + (f" ({len(ahead)} queued before it)" if ahead else "")
        elif ahead:
            out[job.id] = f"waiting behind {len(ahead)} older job(s) for {job.resource}"
        elif not worker_alive:
            out[job.id] = "waiting for the job worker to start"
        else:
            out[job.id] = "starting"
    return out


def waiting_for(job_list: Sequence[Job]) -> dict[int, str]:
    """:func:`waiting_reasons`, read only when one of ``job_list`` is queued (a table's rows need it)."""
    return waiting_reasons() if any(j.status == "queued" for j in job_list) else {}


def resource_jobs(*, exclude_kind: str | None = None, now: float | None = None) -> list[dict]:
    """Every job holding or waiting for a resource (running or queued), oldest first, as table rows
    ``{job, what, status, resource, for, why}`` (``for``: how long it has run or waited; ``why``: for
    a queued job, what it waits for). ``exclude_kind``: leave out jobs whose ``meta["kind"]`` is
    that (a page lists its own jobs in its own table)."""
    now = time.time() if now is None else now
    reasons = waiting_reasons(now)
    rows = []
    for job in sorted(list_jobs(status=ACTIVE_STATUSES, limit=None), key=lambda j: j.id):
        if exclude_kind is not None and job.meta.get("kind") == exclude_kind:
            continue
        since = job.started if job.status == "running" and job.started else job.created
        rows.append({"job": job.id, "what": job.label, "status": job.status, "resource": job.resource,
                     "for": _minutes(now - since), "why": reasons.get(job.id, "")})
    return rows


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
