"""SQLite connections for the project's stores: WAL mode, generous busy timeout, explicit transactions.

Every store opens its database through :func:`connect` (via :func:`core.db.open_store`), so readers
never block writers and several processes can write at once.
"""
from __future__ import annotations

import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

BUSY_TIMEOUT_MS = 60_000


def connect(path: str | Path) -> sqlite3.Connection:
    """Open ``path`` in WAL mode, autocommit (``isolation_level=None``): writes go through :func:`transaction`.

    A store opens its file with :func:`core.db.open_store`, which also brings the file's schema up to
    date (:mod:`core.db.migrations`); a second connection to a file already opened that way (one per
    thread) needs only this.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    # Two processes creating the same new file race for the journal-mode switch, and SQLite answers
    # the loser "database is locked" at once, without waiting (measured: a Ray driver and a reader
    # opening a new run store together): both steps retry, as transaction()'s BEGIN does.
    _retry_locked(conn, lambda: conn.execute("PRAGMA journal_mode=WAL"))
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    return conn


def _retry_locked(conn: sqlite3.Connection, step, *, retries: int = 40) -> None:
    """Run ``step``; on SQLite's immediate "locked"/"busy" answer roll back what it began and retry."""
    for attempt in range(retries):
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            time.sleep(min(0.05 * (attempt + 1), 1.0))
    raise sqlite3.OperationalError(f"database stayed locked after {retries} attempts")


@contextmanager
def transaction(conn: sqlite3.Connection, *, retries: int = 20) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on error.

    IMMEDIATE takes the write lock up front, so two writers queue on the busy timeout instead of
    failing with "database is locked" at commit time; for the rare busy error that
    SQLite returns without waiting (lock upgrade deadlock avoidance): BEGIN is retried (``_retry_locked``).
    """
    _retry_locked(conn, lambda: conn.execute("BEGIN IMMEDIATE"), retries=retries)
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")
