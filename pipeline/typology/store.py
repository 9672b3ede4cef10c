"""The typology store (``cache/typology.sqlite``): every induction run, its rounds, reasons and
assignments, so that convergence can be inspected and pages never call a model.

A run is identified by a hash of what defines its result (dataset, task, the hard-set configuration
and its query ids, the model, the induction settings, the prompt version, and for an imported
typology its categories). Writes go through ``core.db`` (WAL, ``BEGIN IMMEDIATE``); each round is
stored the moment it ends, so an interrupted run shows how far it got. An assignment whose answer
named categories outside the typology keeps those names (``unknown``, status "unknown_category");
a store from before that column gets it on open, its assignments with none.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from core.db import Migration, Schema, SchemaStore, transaction
from core.digest import content_digest
from core.paths import cache_dir
from pipeline.typology.categories import UNKNOWN_CATEGORY, Assignment, Category
from pipeline.typology.degenerate import run_degenerate_reason
from pipeline.typology.induction import HardQuery, Round
from pipeline.typology.parse import reread_status

_TABLES = """
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, dataset TEXT NOT NULL, task TEXT NOT NULL, source TEXT NOT NULL,
  typology_label TEXT NOT NULL, hard_set TEXT NOT NULL, config TEXT NOT NULL, provenance TEXT NOT NULL,
  status TEXT NOT NULL, stop_reason TEXT, categories TEXT, error TEXT,
  created REAL NOT NULL, finished REAL);
CREATE TABLE IF NOT EXISTS queries (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, qid TEXT NOT NULL, position INTEGER NOT NULL,
  query TEXT NOT NULL, context TEXT NOT NULL, reason TEXT, reason_failure TEXT, PRIMARY KEY (run_id, qid));
CREATE TABLE IF NOT EXISTS rounds (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, number INTEGER NOT NULL, status TEXT NOT NULL,
  categories TEXT NOT NULL, added TEXT NOT NULL, removed TEXT NOT NULL, batch TEXT NOT NULL, raw TEXT NOT NULL,
  PRIMARY KEY (run_id, number));
CREATE TABLE IF NOT EXISTS assignments (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, qid TEXT NOT NULL, status TEXT NOT NULL,
  reasons TEXT NOT NULL, raw TEXT NOT NULL, PRIMARY KEY (run_id, qid));
"""
# The store's schema as its migrations (core.db.migrations): a change is a new migration at the end; a
# store made before a migration gets it on open, what it holds reading as the migration's defaults say.
SCHEMA = Schema("typology", (
    Migration.tables(1, "runs, queries, rounds, assignments", _TABLES),
    Migration.columns(2, "assignments", {"unknown": "TEXT NOT NULL DEFAULT '[]'"}, "names outside the typology"),
))


def default_path() -> Path:
    return cache_dir() / "typology.sqlite"


def run_id_for(*, dataset: str, task: str, hard_set: dict, provenance: dict, config: dict,
               qids, imported: list[Category] | None = None) -> str:
    key = {"dataset": dataset, "task": task, "hard_set": hard_set, "qids": sorted(qids),
           "model": {k: provenance.get(k) for k in ("backend", "model")}, "config": config,
           "imported": [c.as_dict() for c in imported] if imported is not None else None}
    return f"{dataset}-{task}-{content_digest(key, 12)}"


def _cats(text: str | None) -> list[Category]:
    return [Category(**c) for c in json.loads(text or "[]")]


class TypologyStore(SchemaStore):
    SCHEMA = SCHEMA

    def __init__(self, path: str | Path | None = None):
        super().__init__(path or default_path())

    # ------------------------------------------------------------------------------------ writes
    def start_run(self, run_id: str, *, dataset: str, task: str, source: str, typology_label: str,
                  hard_set: dict, config: dict, provenance: dict, queries: list[HardQuery]) -> None:
        """(Re)start a run: whatever an earlier attempt stored under this id is replaced."""
        with transaction(self.conn):
            self.conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
            self.conn.execute(
                "INSERT INTO runs (run_id, dataset, task, source, typology_label, hard_set, config, provenance, "
                "status, created) VALUES (?,?,?,?,?,?,?,?, 'running', ?)",
                (run_id, dataset, task, source, typology_label, json.dumps(hard_set), json.dumps(config),
                 json.dumps(provenance), time.time()))
            self.conn.executemany(
                "INSERT INTO queries (run_id, qid, position, query, context) VALUES (?,?,?,?,?)",
                [(run_id, q.qid, i, q.query, q.context) for i, q in enumerate(queries)])

    def save_reasons(self, run_id: str, reasons: dict[str, str], failures: dict[str, str]) -> None:
        with transaction(self.conn):
            self.conn.executemany("UPDATE queries SET reason = ?, reason_failure = ? WHERE run_id = ? AND qid = ?",
                                  [(reasons.get(q), failures.get(q), run_id, q) for q in {*reasons, *failures}])

    def save_round(self, run_id: str, rnd: Round) -> None:
        with transaction(self.conn):
            self.conn.execute(
                "INSERT OR REPLACE INTO rounds VALUES (?,?,?,?,?,?,?,?)",
                (run_id, rnd.number, rnd.status, json.dumps([c.as_dict() for c in rnd.categories]),
                 json.dumps(rnd.added), json.dumps(rnd.removed), json.dumps(rnd.batch), rnd.raw))

    def save_typology(self, run_id: str, categories: list[Category], stop_reason: str | None) -> None:
        with transaction(self.conn):
            self.conn.execute("UPDATE runs SET categories = ?, stop_reason = ? WHERE run_id = ?",
                              (json.dumps([c.as_dict() for c in categories]), stop_reason, run_id))

    def save_assignments(self, run_id: str, assignments: list[Assignment]) -> None:
        with transaction(self.conn):
            self.conn.executemany(
                "INSERT OR REPLACE INTO assignments (run_id, qid, status, reasons, raw, unknown) VALUES (?,?,?,?,?,?)",
                [(run_id, a.qid, a.status, json.dumps(a.as_dict()["reasons"]), a.raw, json.dumps(list(a.unknown)))
                 for a in assignments])
            self.conn.execute("UPDATE runs SET status = 'done', finished = ? WHERE run_id = ?", (time.time(), run_id))

    def fail_run(self, run_id: str, error: str) -> None:
        with transaction(self.conn):
            self.conn.execute("UPDATE runs SET status = 'failed', error = ?, finished = ? WHERE run_id = ?",
                              (error, time.time(), run_id))

    # ------------------------------------------------------------------------------------- reads
    def list_runs(self, dataset: str | None = None, task: str | None = None, status: str | None = None) -> list[dict]:
        sql, args = "SELECT * FROM runs WHERE 1=1", []
        for column, value in (("dataset", dataset), ("task", task), ("status", status)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        return [self._run(row) for row in self.conn.execute(sql + " ORDER BY created DESC", args)]

    def _run(self, row) -> dict:
        out = dict(row)
        for key in ("hard_set", "config", "provenance"):
            out[key] = json.loads(out[key])
        out["categories"] = _cats(out["categories"])
        return out

    def get_run(self, run_id: str) -> dict | None:
        row = self.conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return self._run(row) if row else None

    def rounds(self, run_id: str) -> list[Round]:
        return [Round(r["number"], _cats(r["categories"]), json.loads(r["batch"]), r["status"],
                      json.loads(r["added"]), json.loads(r["removed"]), r["raw"])
                for r in self.conn.execute("SELECT * FROM rounds WHERE run_id = ? ORDER BY number", (run_id,))]

    def queries(self, run_id: str) -> list[dict]:
        """Per query: qid, query, context, reason (or reason_failure), status, assigned reasons and the
        names outside the typology the answer gave (``unknown_categories``).

        A stored answer that today's reader cannot read (:func:`pipeline.typology.parse.read_assignment`:
        ``[7]``, ``[{}]``, ... were stored as "ok, nothing assigned" before issue 33) reads back as
        ``unparseable``: its status is never taken as a reading the reader would not make."""
        run = self.get_run(run_id)
        categories = run["categories"] if run else []
        rows = self.conn.execute(
            "SELECT q.qid, q.query, q.context, q.reason, q.reason_failure, a.status, a.reasons, a.raw, a.unknown "
            "FROM queries q LEFT JOIN assignments a ON a.run_id = q.run_id AND a.qid = q.qid "
            "WHERE q.run_id = ? ORDER BY q.position", (run_id,))
        return [{"qid": r["qid"], "query": r["query"], "context": r["context"], "reason": r["reason"],
                 "reason_failure": r["reason_failure"], "status": reread_status(r["status"], r["raw"], categories),
                 "raw": r["raw"],
                 "assigned": json.loads(r["reasons"]) if r["reasons"] else [],
                 "unknown_categories": json.loads(r["unknown"] or "[]")} for r in rows]

    def result(self, run_id: str) -> dict:
        """Everything about one run, JSON-ready (what ``python -m pipeline typology --json`` prints)."""
        run = self.get_run(run_id)
        if run is None:
            raise KeyError(run_id)
        queries = self.queries(run_id)
        statuses = [q["status"] for q in queries]
        counts = {c.name: 0 for c in run["categories"]}
        invented: dict[str, int] = {}
        for q in queries:
            for a in q["assigned"]:
                counts[a["category"]] = counts.get(a["category"], 0) + 1
            for name in q["unknown_categories"]:
                invented[name] = invented.get(name, 0) + 1
        return {"run_id": run_id, "dataset": run["dataset"], "task": run["task"], "source": run["source"],
                "typology": run["typology_label"], "status": run["status"], "model": run["provenance"],
                "hard_set": run["hard_set"], "config": run["config"], "stop_reason": run["stop_reason"],
                "n_rounds": len(self.rounds(run_id)), "rounds": [r.as_dict() for r in self.rounds(run_id)],
                "categories": [{**c.as_dict(), "n_queries": counts.get(c.name, 0)} for c in run["categories"]],
                "n_queries": len(queries), "n_unparseable": statuses.count("unparseable"),
                # every category for every readable query, or none for any: flagged, and no verdict
                "degenerate": run_degenerate_reason(queries, run["categories"]),
                "n_failed": statuses.count("failed"),
                # answers naming categories outside the typology: counted apart, never "no reason applies"
                "n_unknown_category": statuses.count(UNKNOWN_CATEGORY),
                "unknown_categories": [{"name": n, "n_queries": k} for n, k in
                                       sorted(invented.items(), key=lambda kv: (-kv[1], kv[0]))],
                "error": run["error"],
                "queries": [{k: q[k] for k in ("qid", "query", "reason", "status", "assigned", "unknown_categories",
                                               "raw")} for q in queries]}
