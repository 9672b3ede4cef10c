"""SQLite connections for the project's stores: WAL mode, generous busy timeout, explicit transactions.

Every store (runs, jobs, later the LLM cache and annotations) opens its database through
:func:`connect`, so readers never block writers and several processes can write at once.
"""
from __future__ import annotations

import sqlite3
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

BUSY_TIMEOUT_MS = 60_000


def connect(path: str | Path, *, schema: str | None = None) -> sqlite3.Connection:
    """Open ``path`` in WAL mode, autocommit (``isolation_level=None``): writes go through :func:`transaction`.

    ``schema`` (idempotent ``CREATE ... IF NOT EXISTS`` DDL) is run only when the file's
    ``PRAGMA user_version`` differs from a checksum of that DDL (a new file, or a schema changed
    since), and the checksum is then recorded: opening an existing store (a page's read) runs no
    DDL and takes no write lock, and editing the DDL is enough for every file to get it again.
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
    if schema is not None:
        version = zlib.crc32(schema.encode()) & 0x7FFFFFFF  # PRAGMA user_version is a signed 32-bit int
        if conn.execute("PRAGMA user_version").fetchone()[0] != version:
            # one transaction: a schema (with its back-fill) is applied whole or not at all
            _retry_locked(conn, lambda: conn.executescript(
                f"BEGIN IMMEDIATE;\n{schema}\nPRAGMA user_version = {version};\nCOMMIT;"))
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


def missing_columns(conn: sqlite3.Connection, columns) -> list[tuple[str, str, str]]:
    """The ``(table, column, declaration)`` of ``columns`` whose table lacks that column."""
    have: dict[str, set[str]] = {}
    for table, _, _ in columns:
        if table not in have:
            have[table] = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    return [c for c in columns if c[1] not in have[c[0]]]


def add_columns(conn: sqlite3.Connection, columns) -> None:
    """Give a store made before a column existed each ``(table, column, declaration)`` it lacks (what
    it holds reads as the declaration's default). Checked first without the write lock (a store that
    has them stays a reader), then again inside one write transaction, since another process may have
    added them while this one waited."""
    if not missing_columns(conn, columns):
        return
    with transaction(conn):
        for table, column, declaration in missing_columns(conn, columns):
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


class SchemaStore:
    """Base of a store in one SQLite file: opens it through :func:`connect` with ``SCHEMA``
    (``CREATE TABLE IF NOT EXISTS ...``, run only when the file's schema version is behind), and
    closes as a context manager."""
    SCHEMA = ""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = connect(self.path, schema=self.SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
