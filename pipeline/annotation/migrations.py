"""The steps of the annotation store's migrations 2 and 3 (:mod:`pipeline.annotation.schema`), each run
inside the one transaction that migrates a file (:func:`core.db.migrate`), keeping every answer, note
and history row; and :func:`match_run`, the rule that attributes answers recorded without their
typology run (migration 2 and the import of an older CSV export use it).
"""
from __future__ import annotations

import json
import sqlite3

from pipeline.typology.categories import UNKNOWN_CATEGORY

# The decisions and notes tables as migrations 2 and 3 rebuild them (the current ones).
DECISIONS = """
CREATE TABLE IF NOT EXISTS decisions (
  annotator TEXT NOT NULL, run_id TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  category TEXT NOT NULL,
  llm_assigned INTEGER NOT NULL CHECK (llm_assigned IN (0, 1)),
  llm_answer TEXT NOT NULL DEFAULT 'readable'
    CHECK (llm_answer IN ('readable', 'unreadable', 'unknown', 'unknown_category')),
  human_applicable INTEGER CHECK (human_applicable IN (0, 1)),
  model TEXT NOT NULL DEFAULT '', updated REAL NOT NULL, source TEXT NOT NULL,
  PRIMARY KEY (annotator, run_id, dataset, task, qid, category))"""
NOTES = """
CREATE TABLE IF NOT EXISTS notes (
  annotator TEXT NOT NULL, run_id TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '', proposed TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
  PRIMARY KEY (annotator, run_id, dataset, task, qid))"""


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def match_run(conn: sqlite3.Connection, dataset: str, task: str, qid: str, grid: dict[str, int]) -> sqlite3.Row | None:
    """The stored item of (dataset, task, qid) whose typology run an answer grid judged: the one whose
    categories are the grid's and whose assigned reasons are exactly the grid's ``llm_assigned = 1``
    (the oldest sample first: the first answer wrote the grid). None when no item matches."""
    assigned = {c for c, v in grid.items() if v}
    for row in conn.execute("SELECT i.* FROM items i JOIN samples s USING (sample) WHERE i.dataset = ? AND "
                            "i.task = ? AND i.qid = ? ORDER BY s.created, i.sample", (dataset, task, qid)):
        names = {c["name"] for c in json.loads(row["categories"])}
        if names == set(grid) and {a["category"] for a in json.loads(row["assigned"])} == assigned:
            return row
    return None


def migrate_run_key(conn: sqlite3.Connection) -> None:
    """Key decisions, notes and history by typology run, keeping every row: each (annotator, query) grid
    goes to :func:`match_run`'s run (run ``""`` when none matches); a grid with no assigned reason gets
    ``llm_answer = unknown`` (the old store did not record unreadable assignments). Items get the
    assignment's status, raw answer and generator."""
    if "run_id" in columns(conn, "decisions"):
        return  # keyed by run already: nothing to attribute
    for column in ("status TEXT NOT NULL DEFAULT 'ok'", "raw TEXT NOT NULL DEFAULT ''",
                   "generator TEXT NOT NULL DEFAULT ''"):
        if column.split()[0] not in columns(conn, "items"):
            conn.execute(f"ALTER TABLE items ADD COLUMN {column}")
    conn.execute("UPDATE items SET status = 'unknown' WHERE assigned = '[]'")
    if "run_id" not in columns(conn, "history"):
        conn.execute("ALTER TABLE history ADD COLUMN run_id TEXT NOT NULL DEFAULT ''")
    old = [dict(r) for r in conn.execute("SELECT * FROM decisions")]
    notes = [dict(r) for r in conn.execute("SELECT * FROM notes")]
    grids: dict[tuple, dict[str, int]] = {}
    for r in old:
        grids.setdefault((r["annotator"], r["dataset"], r["task"], r["qid"]), {})[r["category"]] = r["llm_assigned"]
    runs = {}
    for (annotator, *key), grid in grids.items():
        row = match_run(conn, *key, grid)
        runs[(annotator, *key)] = (row["run_id"], row["model"]) if row else ("", "")
    conn.execute("DROP TABLE decisions")
    conn.execute("DROP TABLE notes")
    conn.execute(DECISIONS)
    conn.execute(NOTES)
    for r in old:
        group = (r["annotator"], r["dataset"], r["task"], r["qid"])
        run_id, model = runs[group]
        answer = "readable" if any(grids[group].values()) else "unknown"
        conn.execute("INSERT INTO decisions (annotator, run_id, dataset, task, qid, category, llm_assigned, "
                     "llm_answer, human_applicable, model, updated, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                     (r["annotator"], run_id, r["dataset"], r["task"], r["qid"], r["category"],
                      r["llm_assigned"], answer, r["human_applicable"], model, r["updated"], r["source"]))
    for n in notes:
        run_id = runs.get((n["annotator"], n["dataset"], n["task"], n["qid"]), (None,))[0]
        if run_id is None:  # a note on a query never answered: the oldest sample's run of that query
            row = conn.execute("SELECT i.run_id FROM items i JOIN samples s USING (sample) WHERE i.dataset = ? "
                               "AND i.task = ? AND i.qid = ? ORDER BY s.created LIMIT 1",
                               (n["dataset"], n["task"], n["qid"])).fetchone()
            run_id = row["run_id"] if row else ""
        conn.execute("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?)", (n["annotator"], run_id, n["dataset"], n["task"],
                                                                   n["qid"], n["note"], n["proposed"], n["updated"]))
    for (annotator, dataset, task, qid), (run_id, _) in runs.items():
        conn.execute("UPDATE history SET run_id = ? WHERE annotator = ? AND dataset = ? AND task = ? AND qid = ?",
                     (run_id, annotator, dataset, task, qid))
    kept = conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    if kept != len(old):  # cannot happen (the old key is part of the new one); never commit a loss
        raise RuntimeError(f"annotation store migration would keep {kept} of {len(old)} decisions")


def before_unknown_category(conn: sqlite3.Connection) -> bool:
    """Whether the store predates the ``unknown_category`` answer (its items have no ``unknown``
    column, or its decisions table's CHECK refuses the value)."""
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'decisions'").fetchone()[0]
    return "unknown" not in columns(conn, "items") or f"'{UNKNOWN_CATEGORY}'" not in sql


def migrate_unknown_category(conn: sqlite3.Connection) -> None:
    """Make room for the ``unknown_category`` answer: items get the ``unknown`` column (no names), and
    the decisions table, whose CHECK cannot be altered in place, is rebuilt with every row kept."""
    if "unknown" not in columns(conn, "items"):
        conn.execute("ALTER TABLE items ADD COLUMN unknown TEXT NOT NULL DEFAULT '[]'")
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'decisions'").fetchone()[0]
    if f"'{UNKNOWN_CATEGORY}'" in sql:
        return
    n = conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    names = ", ".join(sorted(columns(conn, "decisions")))
    conn.execute("ALTER TABLE decisions RENAME TO decisions_before_unknown_category")
    conn.execute(DECISIONS)
    conn.execute(f"INSERT INTO decisions ({names}) SELECT {names} FROM decisions_before_unknown_category")
    conn.execute("DROP TABLE decisions_before_unknown_category")
    kept = conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    if kept != n:  # cannot happen (same key, same rows); never commit a loss
        raise RuntimeError(f"annotation store migration would keep {kept} of {n} decisions")
