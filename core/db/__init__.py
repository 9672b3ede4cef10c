"""SQLite plumbing of every store: WAL connections and write transactions (:mod:`.connection`),
declared, versioned schemas applied on open (:mod:`.migrations`), and the base of a store in one file
(:mod:`.store`)."""
from core.db.connection import BUSY_TIMEOUT_MS, connect, transaction
from core.db.migrations import (Migration, Schema, SchemaVersionError, add_columns, has_columns, has_table, migrate,
                                schema_version)
from core.db.store import SchemaStore, open_store

__all__ = ["BUSY_TIMEOUT_MS", "Migration", "Schema", "SchemaStore", "SchemaVersionError", "add_columns", "connect",
           "has_columns", "has_table", "migrate", "open_store", "schema_version", "transaction"]
