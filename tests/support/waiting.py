"""Waiting for a condition another process brings about (a job's status, a server's health, a store row)."""
from __future__ import annotations

import time


def wait_until(predicate, timeout: float = 20.0, what: str = "condition", poll: float = 0.05):
    """``predicate()``'s first truthy value, polled every ``poll`` seconds; AssertionError naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def wait_for_job_status(job_id: int, statuses, timeout: float = 20.0):
    """The job once its status is one of ``statuses``; a running job only once it has its pid (the
    worker claims a job as running before it launches the process, then records the pid)."""
    from core import jobs

    statuses = (statuses,) if isinstance(statuses, str) else statuses

    def reached():
        job = jobs.get_job(job_id)
        return job if job.status in statuses and (job.status != "running" or job.pid is not None) else None

    return wait_until(reached, timeout=timeout, what=f"job {job_id} to become {statuses}")
