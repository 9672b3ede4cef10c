"""core.db's declared, versioned migrations (issue 27 item 2): applied in order on open, in one
transaction, recorded in ``schema_migrations``; a store made before versions is adopted at the version
its tables and columns show; a newer store is refused by name; two processes opening an old store at
once migrate it once. Real SQLite files and real processes."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.db import Migration, Schema, SchemaVersionError, add_columns, connect, migrate, open_store, schema_version
from tests.support.old_stores import copy_old_store, versions

ROOT = Path(__file__).resolve().parents[2]

NOTES = Schema("notes", (
    Migration.tables(1, "notes", "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);"),
    Migration.columns(2, "notes", {"author": "TEXT NOT NULL DEFAULT ''"}),
    Migration(3, "tags, and a first tag per note", "CREATE TABLE IF NOT EXISTS tags (note INTEGER, tag TEXT);\n"
              "INSERT INTO tags SELECT id, 'untagged' FROM notes;"),
))


def _old_file(path: Path, script: str) -> Path:
    """A file made as code without versions made it: its tables, no schema_migrations."""
    old = sqlite3.connect(path)
    old.executescript(script)
    old.close()
    return path


def _columns(conn, table):
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def test_a_new_file_gets_every_migration_in_order_and_a_second_open_writes_nothing(tmp_path):
    path = tmp_path / "n.sqlite"
    conn = open_store(path, NOTES)
    assert _columns(conn, "notes") == ["id", "text", "author"] and _columns(conn, "tags") == ["note", "tag"]
    assert versions(path) == [("notes", 1, "notes"), ("notes", 2, "notes: author"),
                              ("notes", 3, "tags, and a first tag per note")]
    conn.close()
    conn = connect(path)
    statements = []
    conn.set_trace_callback(statements.append)
    assert migrate(conn, NOTES) == 3
    assert not [s for s in statements if not s.lstrip().upper().startswith("SELECT")]  # a reader stays a reader
    conn.close()


def test_a_file_made_before_versions_is_adopted_at_the_version_its_columns_show(tmp_path):
    path = _old_file(tmp_path / "old.sqlite", "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL, "
                     "author TEXT NOT NULL DEFAULT ''); INSERT INTO notes (text, author) VALUES ('kept', 'ann');")
    conn = open_store(path, NOTES)
    assert [v for _, v, _ in versions(path)] == [2, 3] and versions(path)[0][2].startswith("adopted")
    assert [tuple(r) for r in conn.execute("SELECT * FROM notes")] == [(1, "kept", "ann")]
    assert [tuple(r) for r in conn.execute("SELECT * FROM tags")] == [(1, "untagged")]  # migration 3 ran, once
    conn.close()


def test_an_old_file_with_a_later_change_but_not_an_earlier_one_gets_only_what_it_lacks(tmp_path):
    """Adoption stops at the first change a file lacks; the later steps tolerate what it has already."""
    path = _old_file(tmp_path / "old.sqlite", "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);"
                     "CREATE TABLE tags (note INTEGER, tag TEXT); INSERT INTO notes (text) VALUES ('x');")
    conn = open_store(path, NOTES)
    assert _columns(conn, "notes") == ["id", "text", "author"] and schema_version(conn, "notes") == 3
    conn.close()


def test_a_store_at_an_unknown_future_version_is_refused_naming_the_file_and_versions(tmp_path):
    path = tmp_path / "future.sqlite"
    open_store(path, NOTES).close()
    newer = Schema("notes", NOTES.migrations + (Migration.columns(4, "notes", {"colour": "TEXT"}),))
    open_store(path, newer).close()
    with pytest.raises(SchemaVersionError) as error:
        open_store(path, NOTES)
    message = str(error.value)
    assert str(path) in message and "schema version 4" in message and "1 to 3" in message
    assert isinstance(error.value, sqlite3.DatabaseError)  # what the pages' store errors already catch


def test_a_failing_migration_keeps_nothing_of_the_migration_and_names_it(tmp_path):
    path = tmp_path / "n.sqlite"
    open_store(path, Schema("notes", NOTES.migrations[:1])).close()

    def broken(conn):
        add_columns("notes", {"author": "TEXT"})(conn)
        raise RuntimeError("boom")

    failing = Schema("notes", NOTES.migrations[:1] + (Migration(2, "author, then a failure", broken),))
    with pytest.raises(RuntimeError, match="boom") as error:
        open_store(path, failing)
    assert any(str(path) in note and "version 2" in note for note in error.value.__notes__)
    conn = connect(path)
    assert _columns(conn, "notes") == ["id", "text"] and schema_version(conn, "notes") == 1
    conn.close()


def test_migrations_must_be_numbered_in_order():
    with pytest.raises(ValueError, match="1, 2"):
        Schema("bad", (NOTES.migrations[1],))


# Two processes open one file at the same moment (both wait for a start file); the migration step
# appends a row and sleeps inside the transaction, so a second migration would show as a second row.
_OPENER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from core.db import Migration, Schema, open_store

    def slow_append(conn):
        conn.execute("INSERT INTO applied VALUES (?)", (os.getpid(),))
        time.sleep(0.5)

    schema = Schema("race", (
        Migration.tables(1, "t", "CREATE TABLE IF NOT EXISTS t (x); CREATE TABLE IF NOT EXISTS applied (pid);"),
        Migration(2, "append a row, slowly", slow_append),
    ))
    while not Path({go!r}).exists():
        time.sleep(0.005)
    open_store({path!r}, schema).close()
""")


def _open_together(tmp_path, path: Path) -> None:
    go = tmp_path / "go"
    script = _OPENER.format(root=str(ROOT), go=str(go), path=str(path))
    procs = [subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(1.0)  # both started and waiting
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err


def test_two_processes_opening_a_new_file_at_once_migrate_it_once(tmp_path):
    path = tmp_path / "race.sqlite"
    _open_together(tmp_path, path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM applied").fetchone()[0] == 1
    assert [v for _, v, _ in versions(path)] == [1, 2]


def test_two_processes_opening_an_old_file_at_once_adopt_and_migrate_it_once(tmp_path):
    path = _old_file(tmp_path / "race.sqlite", "CREATE TABLE t (x); CREATE TABLE applied (pid); INSERT INTO t VALUES (7);")
    _open_together(tmp_path, path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM applied").fetchone()[0] == 1
    assert conn.execute("SELECT x FROM t").fetchall() == [(7,)]
    assert [v for _, v, _ in versions(path)] == [1, 2]


def test_two_processes_opening_an_old_run_store_at_once_both_open_it(tmp_path):
    """The run store written by the code before versions (main at 20028e0), opened by two processes at
    the same moment: both open it, and it is adopted once."""
    path = copy_old_store("runs.sqlite", tmp_path)
    go = tmp_path / "go"
    script = (f"import sys, time; sys.path.insert(0, {str(ROOT)!r}); from pathlib import Path\n"
              f"from ltr.store import RunStore\nwhile not Path({str(go)!r}).exists(): time.sleep(0.005)\n"
              f"s = RunStore({str(path)!r}); assert s.get_run('run-done')['status'] == 'completed'; s.close()")
    procs = [subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(2.0)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    # adopted at the last version it holds, once, then migrated past it (runs 4: pretrain_paid, pretrain_key;
    # runs 5: code_commit, code_dirty, code_platform)
    assert [(s, v) for s, v, _ in versions(path)] == [("runs", 3), ("runs", 4), ("runs", 5)]
