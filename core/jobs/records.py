"""A job as stored: the jobs database (schema, connection), the :class:`Job` record, its log files."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from core.db import Migration, Schema, open_store
from core.paths import cache_dir, cache_subdir

JOB_STATUSES = ("queued", "running", "completed", "failed", "cancelled")
ACTIVE_STATUSES = ("queued", "running")
DEFAULT_LIMIT = 1
LOG_TAIL_CHARS = 4000
LIMITS_ENV = "IRDASH_JOB_LIMITS"

_TABLES = """
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
CREATE TABLE IF NOT EXISTS limits (
    resource TEXT PRIMARY KEY,
    n INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS worker (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pid INTEGER,
    started REAL,
    heartbeat REAL
);
"""
# The jobs store's schema (core.db.migrations): a change to it is a new migration at the end.
SCHEMA = Schema("jobs", (Migration.tables(1, "jobs, concurrency limits, the worker", _TABLES),))


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
    def cancel_path(self) -> Path:
        """Created to cancel a hosted job (its host stops the run; see :mod:`core.jobs.hosts`)."""
        return cache_subdir("jobs") / f"{self.id}.cancel"

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES


def jobs_db_path() -> Path:
    return cache_dir() / "jobs.sqlite"


def job_log_path(job_id: int) -> Path:
    return cache_subdir("jobs") / f"{job_id}.log"


def connect_jobs():
    return open_store(jobs_db_path(), SCHEMA)


def job_from_row(row) -> Job:
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

