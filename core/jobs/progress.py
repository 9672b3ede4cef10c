"""How a job's process tells the page how far it is: a small progress record that the page reads.

This is the mechanism training jobs use (the run store records ``epochs_done`` of ``total_epochs``
and a heartbeat; the job's ``meta`` names the run, and the jobs table joins the two), made generic
for jobs that have no store of their own: the process writes ``cache/jobs/progress/<key>.json``
atomically (a reader never sees half a record), the job's ``meta["progress"]`` names ``<key>``, and
:func:`describe` turns a record into the words of the jobs table: stage n of m, items done of
total, the rate and the remaining time.

A record::

    {"status": "running" | "completed" | "failed", "stage": "judgments llama (graded)",
     "stage_index": 3, "stages": 7, "done": 12, "total": 43, "unit": "call",
     "started": t0, "stage_started": t1, "updated": t2, "error": "..."}
"""
from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

from core.atomic import atomic_write_text
from core.paths import cache_subdir

KEY = re.compile(r"^[A-Za-z0-9._-]{1,120}$")


def progress_path(key: str) -> Path:
    if not KEY.match(key):
        raise ValueError(f"progress key {key!r}: letters, digits, '.', '_' and '-' only")
    return cache_subdir("jobs", "progress") / f"{key}.json"


def new_key(prefix: str) -> str:
    """A fresh key for a job's record (``prefix-<random hex>``): the page passes it to the command
    (``--progress-key``) and stores it in the job's ``meta["progress"]``."""
    return progress_path(f"{prefix}-{uuid.uuid4().hex[:16]}").stem


def read_progress(key: str | None) -> dict | None:
    """The record of ``key`` (None when there is none yet, or it cannot be read)."""
    if not key:
        return None
    try:
        return json.loads(progress_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def duration(seconds: float) -> str:
    seconds = int(round(max(seconds, 0)))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def plural(unit: str) -> str:
    """``answer`` -> ``answers``, ``query`` -> ``queries`` (the units records use)."""
    return unit[:-1] + "ies" if unit.endswith("y") and unit[-2:-1] not in "aeiou" else unit + "s"


def describe(record: dict | None, now: float | None = None) -> str:
    """``stage 3 of 7: judgments llama (graded) · 12/43 calls · 1.5 calls/s · about 21 s left``."""
    if not record:
        return ""
    now = time.time() if now is None else now
    parts = []
    if record.get("stages") and record.get("stage_index"):
        parts.append(f"stage {record['stage_index']} of {record['stages']}: {record.get('stage', '')}")
    elif record.get("stage"):
        parts.append(str(record["stage"]))
    done, total, unit = record.get("done"), record.get("total"), plural(record.get("unit") or "item")
    if total:
        parts.append(f"{done or 0}/{total} {unit}")
        elapsed = (record.get("updated") or now) - (record.get("stage_started") or now)
        if done and elapsed > 0 and record.get("status", "running") == "running":
            rate = done / elapsed
            parts.append(f"{rate:.2f} {unit}/s" if rate < 10 else f"{rate:.0f} {unit}/s")
            parts.append(f"about {duration((total - done) / rate)} left in this stage")
    if record.get("status") == "failed" and record.get("error"):
        parts.append(f"failed: {record['error']}")
    return " · ".join(parts)


class ProgressWriter:
    """Writes one job's progress record; at most one write per ``interval`` seconds for item counts
    (stage changes and the end are always written). A writer without a key writes nothing, so the
    same code runs with and without a page watching."""

    def __init__(self, key: str | None, stages: int = 0, *, interval: float = 1.0):
        self.path = progress_path(key) if key else None
        self.interval = interval
        now = time.time()
        self.record = {"status": "running", "stage": "", "stage_index": 0, "stages": stages, "done": 0,
                       "total": 0, "unit": "item", "started": now, "stage_started": now, "updated": now}
        self._written = 0.0
        self._write(force=True)

    def stage(self, name: str, total: int = 0, unit: str = "item") -> None:
        now = time.time()
        self.record.update(stage=name, stage_index=self.record["stage_index"] + 1, done=0, total=int(total),
                           unit=unit, stage_started=now, updated=now)
        self._write(force=True)

    def set_total(self, total: int) -> None:
        """The current stage's item count, once it is known (e.g. the pairs a judge will label)."""
        self.record["total"] = int(total)
        self._write(force=True)

    def set_stages(self, stages: int) -> None:
        """The run's stage count, once it is known (a typology's induction may converge before its
        last allowed round: the stages it skipped are dropped, so the last stage reads "n of n")."""
        self.record["stages"] = int(stages)
        self._write(force=True)

    def advance(self, n: int = 1) -> None:
        self.record["done"] += int(n)
        self.record["updated"] = time.time()
        self._write()

    def finish(self, error: str | None = None) -> None:
        self.record.update(status="failed" if error else "completed", updated=time.time())
        if error:
            self.record["error"] = error
        self._write(force=True)

    def __enter__(self) -> "ProgressWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        """Leaving the block ends the record: completed, or failed with the exception's one-line text
        (so the jobs table says which stage failed and why)."""
        self.finish(error=(" ".join(str(exc).split()) or exc_type.__name__) if exc_type else None)
        return False

    def _write(self, force: bool = False) -> None:
        if self.path is None:
            return
        now = time.time()
        if force or now - self._written >= self.interval:
            atomic_write_text(self.path, json.dumps(self.record))
            self._written = now


def job_message(job, waiting: dict[int, str] | None = None, now: float | None = None) -> str:
    """What a jobs table says about ``job`` (a :class:`core.jobs.Job`), the same on every page: a
    queued job's reason for waiting (``waiting``: :func:`core.jobs.waiting_reasons`), a running
    job's progress record (``meta["progress"]``), else its last output line, a failed job's last
    error line (never only the runner's exit code)."""
    from core.jobs.queue import failure_message
    from core.jobs.records import read_log_tail

    if job.status == "queued":
        return (waiting or {}).get(job.id, "waiting")
    if job.status == "running":
        message = describe(read_progress(job.meta.get("progress")), now)
        if message:  # none before the job's first stage: its output says what it is doing
            return message
        return failure_message(read_log_tail(job.log_path, 400).replace("\r", "\n"))
    if job.status == "failed":
        return failure_message(job.log_tail)
    return ""


def job_messages(job_list, now: float | None = None) -> dict[int, str]:
    """:func:`job_message` of each job (keyed by id), the waiting reasons read once."""
    from core.jobs.queue import waiting_for

    waiting = waiting_for(job_list)
    return {j.id: job_message(j, waiting, now) for j in job_list}
