"""The run store as the dashboard's pages open it."""
from __future__ import annotations

from ltr.store import RunStore


def open_store(path: str | None = None) -> RunStore:
    """The run store (default ``cache/runs.sqlite``); use as a context manager, one per script run."""
    return RunStore(path)
