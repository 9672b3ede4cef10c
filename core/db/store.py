"""Opening a store's file: a connection (:func:`core.db.connect`) whose file is brought up to the
store's declared schema (:func:`core.db.migrate`), and :class:`SchemaStore`, the base of a store in one
SQLite file."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from core.db.connection import connect
from core.db.migrations import Schema, migrate


def open_store(path: str | Path, schema: Schema) -> sqlite3.Connection:
    """A connection to ``path`` with its schema at ``schema``'s last version (migrated first if behind)."""
    conn = connect(path)
    try:
        migrate(conn, schema)
    except BaseException:
        conn.close()
        raise
    return conn


class SchemaStore:
    """Base of a store in one SQLite file: ``SCHEMA`` (a :class:`core.db.Schema`) is applied on open
    (:func:`open_store`), ``conn`` is the connection, and the store closes as a context manager."""
    SCHEMA: Schema

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = open_store(self.path, self.SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
