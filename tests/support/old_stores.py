"""The stores made by the code before the versioned migrations (``tests/fixtures/old_stores/``, see its
README): a copy to open, and the check that every row reads back as that code read it."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

OLD_STORES = Path(__file__).resolve().parents[1] / "fixtures" / "old_stores"


def copy_old_store(name: str, folder: Path) -> Path:
    """A copy of the old store ``name`` (a path under the fixture folder, e.g. ``llm/responses.sqlite``)
    at the same relative path under ``folder``; the fixture itself is never opened for writing."""
    target = folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(OLD_STORES / name, target)
    return target


def rows_as_before(path: Path, name: str) -> None:
    """Assert that every table the old code wrote in store ``name`` has the same columns (in order; columns a
    later migration appended come after them, empty) and rows, read from ``path`` (BLOBs by their SHA-256, as
    ``rows.json`` holds them)."""
    from tests.fixtures.old_stores.make_old_stores import snapshot_file

    before = json.loads((OLD_STORES / "rows.json").read_text())[name]
    now = snapshot_file(path)
    for table in before["columns"]:
        # a later migration may append columns (ltr runs: pretrain_paid, pretrain_key): the old ones keep their
        # order and values, and the appended ones are empty on the old rows
        old = len(before["columns"][table])
        assert now["columns"][table][:old] == before["columns"][table], f"{name}: {table}'s columns changed"
        assert [row[:old] for row in now["rows"][table]] == before["rows"][table], f"{name}: {table}'s rows changed"
        assert all(v is None for row in now["rows"][table] for v in row[old:]), f"{name}: {table}'s new columns filled"


def versions(path: Path) -> list[tuple[str, int, str]]:
    """``(store, version, description)`` of every migration recorded in the file."""
    conn = sqlite3.connect(path)
    try:
        return [tuple(r) for r in conn.execute("SELECT store, version, description FROM schema_migrations "
                                               "ORDER BY store, version")]
    finally:
        conn.close()
