"""Declared, versioned schemas: a store lists its migrations in order, and :func:`migrate` brings a file
up to the last one when the store opens it.

A :class:`Migration` is a version (1, 2, ...), a description, a step (SQL, one or more statements, or a
function of the connection) and a ``present`` check (see adoption below). The migrations a file has
had are rows of its ``schema_migrations`` table (store, version, description, time applied), one per
migration and store; not ``PRAGMA user_version``, because the code before this module kept a checksum
of its DDL there, which says nothing about which changes a file holds.

Opening a store (:func:`migrate`):

1. The file's version is read without a lock. At the last version nothing more happens: a page's read
   takes no write lock. Above it: :class:`SchemaVersionError`, naming the file and both versions (newer
   code wrote it; this code would misread it).
2. Behind it: one ``BEGIN IMMEDIATE`` transaction (:func:`core.db.transaction`, which retries SQLite's
   immediate "locked" answer) reads the version again (another process may have migrated the file while
   this one waited for the lock: then nothing is left to do) and applies every later migration in
   order, recording each. A file is migrated whole or not at all, and two processes opening an old
   file at once migrate it once; the second waits, then finds it done.

Adoption. A file made before its store declared migrations has tables but no recorded version. It
starts at the number of leading migrations whose ``present`` check holds on it (which tables and
columns it actually has), recorded as one "adopted" row, and gets the rest applied. Because a file can
hold a later change without an earlier one, every step must be safe where part of its change is there
already (``CREATE ... IF NOT EXISTS``; :func:`add_columns` adds only the missing columns).
"""
from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Union

from core.db.connection import transaction

Check = Callable[[sqlite3.Connection], bool]
Step = Union[str, Callable[[sqlite3.Connection], None]]

_VERSIONS_DDL = """CREATE TABLE IF NOT EXISTS schema_migrations (
  store TEXT NOT NULL, version INTEGER NOT NULL, description TEXT NOT NULL, applied REAL NOT NULL,
  PRIMARY KEY (store, version))"""


class SchemaVersionError(sqlite3.DatabaseError):
    """A store file at a schema version this code does not know (written by newer code)."""


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    step: Step
    present: Check | None = None  # does a file made before versions already hold this change? (adoption)

    @classmethod
    def tables(cls, version: int, description: str, ddl: str) -> "Migration":
        """``CREATE TABLE IF NOT EXISTS ...`` DDL; an old file holds it when it has every table the DDL
        creates (a cache made before its ``failures`` table had only ``responses``: judged by that one
        table, it was adopted past the step that creates ``failures`` and the next step failed)."""
        tables = tuple(re.findall(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)", ddl, re.I))
        if not tables:
            raise ValueError(f"migration {version} ({description}): its DDL creates no table")
        return cls(version, description, ddl, lambda conn: all(has_table(t)(conn) for t in tables))

    @classmethod
    def columns(cls, version: int, table: str, columns: Mapping[str, str], why: str = "") -> "Migration":
        """New columns ``{name: declaration}`` of ``table`` (:func:`add_columns`); an old file holds
        them when it has them all."""
        return cls(version, f"{table}: {', '.join(columns)}" + (f" ({why})" if why else ""),
                   add_columns(table, columns), has_columns(table, *columns))


@dataclass(frozen=True)
class Schema:
    """A store's schema as its ordered migrations; ``store`` names it in ``schema_migrations`` and errors."""
    store: str
    migrations: tuple[Migration, ...]

    def __post_init__(self):
        versions = [m.version for m in self.migrations]
        if versions != list(range(1, len(versions) + 1)):
            raise ValueError(f"the {self.store} store's migrations must be numbered 1, 2, ... in order: {versions}")

    @property
    def latest(self) -> int:
        return len(self.migrations)


def has_table(table: str) -> Check:
    """A ``present`` check: the file has ``table``."""
    return lambda conn: bool(_columns(conn, table))


def has_columns(table: str, *columns: str) -> Check:
    """A ``present`` check: ``table`` exists and has every one of ``columns``."""
    def check(conn: sqlite3.Connection) -> bool:
        have = _columns(conn, table)
        return bool(have) and set(columns) <= have
    return check


def add_columns(table: str, columns: Mapping[str, str]) -> Callable[[sqlite3.Connection], None]:
    """A step giving ``table`` each ``{column: declaration}`` it lacks (existing rows read the
    declaration's default); columns it has already are left alone."""
    def step(conn: sqlite3.Connection) -> None:
        have = _columns(conn, table)
        for column, declaration in columns.items():
            if column not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
    return step


def schema_version(conn: sqlite3.Connection, store: str) -> int | None:
    """The last migration of ``store`` recorded in the file; None when none is (a new file, or one made
    before versions)."""
    try:
        return conn.execute("SELECT MAX(version) FROM schema_migrations WHERE store = ?", (store,)).fetchone()[0]
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise


def migrate(conn: sqlite3.Connection, schema: Schema) -> int:
    """Bring the file of ``conn`` (a :func:`core.db.connect` connection) up to ``schema``'s last version,
    as the module docstring says; returns that version."""
    version = schema_version(conn, schema.store)
    _check_known(conn, schema, version)
    if version == schema.latest:
        return version
    with transaction(conn):
        version = schema_version(conn, schema.store)
        if version is None:
            conn.execute(_VERSIONS_DDL)
            version = _adopted_version(conn, schema)
            if version:
                _record(conn, schema.store, version, "adopted: a store made before versioned migrations, found "
                                                     f"holding migrations 1-{version}")
        _check_known(conn, schema, version)
        for migration in schema.migrations[version:]:
            try:
                _apply(conn, migration.step)
            except Exception as exc:
                exc.add_note(f"{_file(conn)}: migrating the {schema.store} store to version {migration.version} "
                             f"({migration.description}); nothing of it was kept")
                raise
            _record(conn, schema.store, migration.version, migration.description)
    return schema.latest


def _check_known(conn: sqlite3.Connection, schema: Schema, version: int | None) -> None:
    if version is not None and version > schema.latest:
        raise SchemaVersionError(
            f"{_file(conn)}: the {schema.store} store is at schema version {version}, newer than this code knows "
            f"(versions 1 to {schema.latest}); open it with the newer code that wrote it")


def _adopted_version(conn: sqlite3.Connection, schema: Schema) -> int:
    version = 0
    for migration in schema.migrations:
        if migration.present is None or not migration.present(conn):
            break
        version = migration.version
    return version


def _apply(conn: sqlite3.Connection, step: Step) -> None:
    if callable(step):
        step(conn)
        return
    for statement in _statements(step):
        conn.execute(statement)  # one by one: executescript would commit the open transaction first


def _statements(sql: str):
    """The statements of an SQL script (a ``;`` inside a string or comment does not end one)."""
    pending = ""
    for part in sql.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\n;"):
                yield pending
            pending = ""
    if pending.strip(" \t\n;"):
        raise ValueError(f"an incomplete SQL statement in a migration: {pending.strip()[:200]}")


def _record(conn: sqlite3.Connection, store: str, version: int, description: str) -> None:
    conn.execute("INSERT INTO schema_migrations (store, version, description, applied) VALUES (?, ?, ?, ?)",
                 (store, version, description, time.time()))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _file(conn: sqlite3.Connection) -> str:
    return conn.execute("PRAGMA database_list").fetchone()[2] or "(in memory)"
