"""The run store as pages open it: one store (one read connection, its live-series cache) per session."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, MutableMapping

from ltr.store import RunStore, default_store_path

SESSION_KEY = "ltr.views.run_store"


def open_store(path: str | None = None) -> RunStore:
    """A new run store (default ``cache/runs.sqlite``); use as a context manager (it closes)."""
    return RunStore(path)


@contextmanager
def session_store(state: MutableMapping, path: str | Path | None = None) -> Iterator[RunStore]:
    """The store of one dashboard session, kept in ``state`` (the page's ``st.session_state``).

    Opened on the session's first use and reused by every rerun and live refresh after it, so a
    refresh neither reconnects nor re-reads step series it has drawn (:meth:`RunStore.live_step_series`).
    """
    path = Path(path) if path is not None else default_store_path()
    store = state.get(SESSION_KEY)
    if store is None or store.path != path:
        store = RunStore(path)
        state[SESSION_KEY] = store
    yield store
