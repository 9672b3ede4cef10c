"""The run store at one path: :class:`RunStore` opens its file (its schema brought up to date on open)
and joins the writers and readers."""
from __future__ import annotations

from pathlib import Path

from core.db import SchemaStore
from core.paths import cache_dir
from ltr.store.live import LiveSeries
from ltr.store.reads import RunReads
from ltr.store.schema import SCHEMA
from ltr.store.writes import RunWrites


def default_store_path() -> Path:
    return cache_dir() / "runs.sqlite"


class RunStore(RunWrites, RunReads, SchemaStore):
    """Read/write access to the run store at ``path`` (default ``cache/runs.sqlite``)."""
    SCHEMA = SCHEMA

    def __init__(self, path: str | Path | None = None):
        super().__init__(Path(path) if path is not None else default_store_path())
        self._live = LiveSeries()
