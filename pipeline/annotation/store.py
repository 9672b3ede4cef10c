"""Human annotation of LLM-assigned failure reasons: samples, answers, history, CSV export/import.

Storage: ``cache/annotations.sqlite`` (``core.db``: WAL, ``BEGIN IMMEDIATE``), kept apart from every
cache because it holds people's work. Every answer is one transaction, committed the moment it is
given, so a reload, a closed tab, a server restart or a second annotator writing at the same time
loses nothing.

Model of the data
-----------------
* **Item**: one hard query of one task -- (dataset, task, qid) -- with a snapshot of what the
  annotator sees: the query, its task context, the typology's categories, the LLM-assigned reasons
  with their justifications, the assignment's status (``ok``, or ``unparseable`` / ``failed``: the
  model's answer could not be read, kept with its raw text) and the typology run, model and H2G
  generator it came from (copied from a typology run, so later runs cannot change it).
* **Sample**: named, ``size`` items (50 by default) drawn with ``seed``, stratified by task
  (proportional allocation, largest remainder, at least one per task that has items). By default
  one shared list that every annotator works through (agreement needs the same queries);
  ``per_annotator=True`` draws each annotator's own list with a seed derived from their name.
* **Decision**: one row per (annotator, run_id, dataset, task, qid, category) -- the typology run is
  part of the key, because an answer judges *that run's* assignment: a newer run's sample of the same
  query gets its own grid, never the old run's ``llm_assigned``. Columns: ``llm_assigned`` (0/1),
  ``llm_answer`` (``readable``; ``unreadable`` when the model's assignment could not be read, so
  ``llm_assigned`` says nothing; ``unknown_category`` when it named categories outside the typology,
  so "not assigned" says nothing either; ``unknown`` for rows from before this was recorded, see below),
  ``human_applicable`` (0/1, NULL while an assigned reason is still unmarked) and ``model`` (who
  assigned the reasons). The first answer on an item writes its full grid: assigned categories start
  unmarked, the others start at 0 ("not tagged"). An item is *complete* when no row is unmarked. What
  is exported and reported are the *answered* cells (:data:`ANSWERED_CELLS`): every cell of a complete
  item (its untagged categories are the annotator's "does not apply"), and of a partial item the cells
  an answer set (a marked assigned reason, a category tagged or untagged, an imported row), never its
  untouched 0s, which are no answer yet. Before issue 33 only complete items counted: 10 saved answers
  read "exported 0 rows", "0 decisions" and "no annotations".
* **Received answers**: an answer that carries an id (one the page's browser kept while the server was
  unreachable, sent when it is back, perhaps more than once) is recorded by id with the time it was
  given: it is applied once, and never over an answer given later (:meth:`AnnotationStore.set_answer`).
* **History**: every change (UI or import) is appended with its time, source and run; answers can be
  changed, nothing is overwritten without a trace. Notes and proposed new reasons are kept per item.

CSV export and import: :mod:`pipeline.annotation.csv_format`; sampling: :mod:`pipeline.annotation.sampling`;
the schema and the migrations that bring a store made by older code up to date on open, in one
transaction, keeping every answer and note: :mod:`pipeline.annotation.schema`.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Iterable

from core.db import SchemaStore, transaction
from core.paths import cache_dir
from pipeline.annotation.csv_format import CSV_COLUMNS, attribute_legacy_rows, csv_text, read_csv
from pipeline.annotation.items import AnnotationError, Item, check_name
from pipeline.annotation.migrations import match_run
from pipeline.annotation.sampling import annotator_seed, draw_sample
from pipeline.annotation.schema import SCHEMA
from pipeline.typology.categories import UNKNOWN_CATEGORY, Category
from pipeline.typology.parse import reread_status

DEFAULT_SAMPLE = "default"
DEFAULT_SIZE = 50
SHARED = ""  # the annotator column of a sample shared by everyone


# The decision rows that carry an answer (module docstring), with ``complete``: 1 for a complete item.
ANSWERED_CELLS = """
SELECT d.*, COALESCE(c.complete, 0) AS complete FROM decisions d
LEFT JOIN (SELECT annotator, run_id, dataset, task, qid, 1 AS complete FROM decisions
           GROUP BY annotator, run_id, dataset, task, qid HAVING SUM(human_applicable IS NULL) = 0) c
  USING (annotator, run_id, dataset, task, qid)
WHERE d.human_applicable IS NOT NULL AND (c.complete = 1 OR d.source != 'ui' OR EXISTS (
  SELECT 1 FROM history h WHERE h.annotator = d.annotator AND h.run_id = d.run_id AND h.dataset = d.dataset
  AND h.task = d.task AND h.qid = d.qid AND h.field = 'category:' || d.category))
"""


def default_path() -> Path:
    return cache_dir() / "annotations.sqlite"


def _item(row) -> Item:
    categories = json.loads(row["categories"])
    return Item(row["dataset"], row["task"], row["qid"], row["run_id"], row["model"], row["query"], row["context"],
                categories, json.loads(row["assigned"]), _reread(row["status"], row["raw"], categories), row["raw"],
                row["generator"], tuple(json.loads(row["unknown"])))


def _reread(status: str, raw: str, categories: list[dict]) -> str:
    """The item's assignment status as today's reader reads its answer (an item sampled before issue 33
    kept ``[7]``, ``[{}]``, ... as "ok, nothing assigned"): :func:`pipeline.typology.parse.reread_status`."""
    return reread_status(status, raw, [Category(c["name"], c.get("description", "")) for c in categories])


class AnnotationStore(SchemaStore):
    SCHEMA = SCHEMA

    def __init__(self, path: str | Path | None = None):
        super().__init__(path or default_path())

    # ------------------------------------------------------------------------------- samples
    def create_sample(self, items: Iterable[Item], *, name: str = DEFAULT_SAMPLE, size: int = DEFAULT_SIZE,
                      seed: int = 0, per_annotator: bool = False) -> list[tuple[str, str, str]]:
        """Store the pool of items and draw the shared queue (or set up per-annotator draws).

        A sample is created once: its queue never changes under annotators' feet. Creating it again
        with the same name is refused.
        """
        items = list(items)
        if size < 1:
            raise AnnotationError(f"sample size must be at least 1, got {size}")
        if not items:
            raise AnnotationError("no items to sample from (no typology run with assignments?)")
        with transaction(self.conn):
            if self.conn.execute("SELECT 1 FROM samples WHERE sample = ?", (name,)).fetchone():
                raise AnnotationError(f"a sample named {name!r} exists already")
            self.conn.execute("INSERT INTO samples VALUES (?,?,?,?,?)", (name, size, seed, int(per_annotator), time.time()))
            self.conn.executemany(
                "INSERT INTO items (sample, dataset, task, qid, run_id, model, query, context, categories, assigned, "
                "status, raw, generator, unknown) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(name, i.dataset, i.task, i.qid, i.run_id, i.model, i.query, i.context, json.dumps(i.categories),
                  json.dumps(i.assigned), i.status, i.raw, i.generator, json.dumps(list(i.unknown))) for i in items])
            keys = draw_sample([i.key for i in items], size, seed)
            if not per_annotator:
                self._write_queue(name, SHARED, keys)
        return keys

    def _write_queue(self, sample: str, annotator: str, keys) -> None:
        self.conn.executemany("INSERT INTO queue VALUES (?,?,?,?,?,?)",
                              [(sample, annotator, i, *k) for i, k in enumerate(keys)])

    def samples(self) -> list[dict]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM samples ORDER BY created")]

    def queue(self, annotator: str, sample: str = DEFAULT_SAMPLE) -> list[Item]:
        """The annotator's items in order (drawing their own list first for a per-annotator sample)."""
        annotator = check_name(annotator)
        meta = self.conn.execute("SELECT * FROM samples WHERE sample = ?", (sample,)).fetchone()
        if meta is None:
            return []
        owner = annotator if meta["per_annotator"] else SHARED
        if owner != SHARED and not self.conn.execute(
                "SELECT 1 FROM queue WHERE sample = ? AND annotator = ?", (sample, owner)).fetchone():
            with transaction(self.conn):
                if not self.conn.execute("SELECT 1 FROM queue WHERE sample = ? AND annotator = ?",
                                         (sample, owner)).fetchone():
                    keys = [(r["dataset"], r["task"], r["qid"]) for r in
                            self.conn.execute("SELECT dataset, task, qid FROM items WHERE sample = ?", (sample,))]
                    self._write_queue(sample, owner, draw_sample(keys, meta["size"], annotator_seed(meta["seed"], owner)))
        rows = self.conn.execute(
            "SELECT i.* FROM queue q JOIN items i ON i.sample = q.sample AND i.dataset = q.dataset "
            "AND i.task = q.task AND i.qid = q.qid WHERE q.sample = ? AND q.annotator = ? ORDER BY q.position",
            (sample, owner))
        return [_item(r) for r in rows]

    # ------------------------------------------------------------------------------- answers
    def _log(self, source, annotator, key, field, value) -> None:
        """``key`` is a decision key (run_id, dataset, task, qid)."""
        self.conn.execute("INSERT INTO history (at, source, annotator, run_id, dataset, task, qid, field, value) "
                          "VALUES (?,?,?,?,?,?,?,?,?)", (time.time(), source, annotator, *key, field,
                                                         None if value is None else str(value)))

    def _ensure_grid(self, annotator: str, item: Item, now: float) -> None:
        """Write the item's grid on its first answer; refuse when a grid stored under the same run
        says the LLM assigned something else (the run was recomputed with a different answer)."""
        assigned = set(item.assigned_names)
        self.conn.executemany(
            "INSERT OR IGNORE INTO decisions (annotator, run_id, dataset, task, qid, category, llm_assigned, "
            "llm_answer, human_applicable, model, updated, source) VALUES (?,?,?,?,?,?,?,?,?,?,?, 'ui')",
            [(annotator, *item.decision_key, c["name"], int(c["name"] in assigned), item.llm_answer,
              None if c["name"] in assigned else 0, item.model, now) for c in item.categories])
        stored = {r["category"]: r["llm_assigned"] for r in self.conn.execute(
            "SELECT category, llm_assigned FROM decisions WHERE annotator = ? AND run_id = ? AND dataset = ? "
            "AND task = ? AND qid = ?", (annotator, *item.decision_key))}
        if stored != {c["name"]: int(c["name"] in assigned) for c in item.categories}:
            raise AnnotationError(f"{' '.join(item.key)}: the answers stored for typology run {item.run_id} judge a "
                                  "different assignment than this sample shows (was the run recomputed?); nothing "
                                  "was saved")

    def _received(self, answer_id: str | None) -> str | None:
        """The outcome recorded for ``answer_id`` (None: never received, or no id)."""
        if answer_id is None:
            return None
        row = self.conn.execute("SELECT outcome FROM received_answers WHERE answer_id = ?", (answer_id,)).fetchone()
        return row["outcome"] if row else None

    def _record_received(self, answer_id, annotator, item, field, value, given, now, outcome) -> str:
        if answer_id is not None:
            self.conn.execute("INSERT INTO received_answers VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                              (answer_id, annotator, *item.decision_key, field, value, given, now, outcome))
        return outcome

    def set_answer(self, annotator: str, item: Item, category: str, applicable: bool | None, *,
                   answer_id: str | None = None, given: float | None = None) -> str:
        """Record that ``category`` applies (or not) to ``item`` in ``annotator``'s view.

        For an LLM-assigned category this marks the reason correct / incorrect; for any other
        category it tags (untags) it as an applicable reason the LLM missed. ``None`` unmarks an
        assigned reason. Committed before returning.

        An answer with an ``answer_id`` (given at ``given``, a time on this machine's clock; default:
        now) is applied once: received again, it changes nothing (outcome ``"duplicate"``). It
        does not replace an answer stored for the same category that was given later (outcome
        ``"superseded"``, nothing changed). Returns ``"stored"``, ``"superseded"`` or ``"duplicate"``.
        """
        annotator = check_name(annotator)
        if category not in {c["name"] for c in item.categories}:
            raise AnnotationError(f"{category!r} is not a category of this item's typology")
        if applicable is None and category not in item.assigned_names:
            raise AnnotationError("only an LLM-assigned reason can be left unmarked")
        value = None if applicable is None else int(bool(applicable))
        with transaction(self.conn):
            if self._received(answer_id) is not None:
                return "duplicate"
            now = time.time()
            at = now if given is None else min(float(given), now)  # never dated after it arrived
            self._ensure_grid(annotator, item, now)
            field = f"category:{category}"
            # the row's time is when its answer was given; the grid's first write has no answer yet
            # (assigned: NULL), an untagged category's 0 is no answer either (source 'ui', no history)
            newer = self.conn.execute(
                "SELECT 1 FROM decisions d WHERE annotator = ? AND run_id = ? AND dataset = ? AND task = ? AND qid = ? "
                "AND category = ? AND updated > ? AND (source != 'ui' OR EXISTS (SELECT 1 FROM history h WHERE "
                "h.annotator = d.annotator AND h.run_id = d.run_id AND h.dataset = d.dataset AND h.task = d.task AND "
                "h.qid = d.qid AND h.field = ?))", (annotator, *item.decision_key, category, at, field)).fetchone()
            if newer:
                return self._record_received(answer_id, annotator, item, field, value, at, now, "superseded")
            self.conn.execute("UPDATE decisions SET human_applicable = ?, updated = ?, source = 'ui' WHERE annotator = ? "
                              "AND run_id = ? AND dataset = ? AND task = ? AND qid = ? AND category = ?",
                              (value, at, annotator, *item.decision_key, category))
            self._log("ui", annotator, item.decision_key, field, value)
            return self._record_received(answer_id, annotator, item, field, value, at, now, "stored")

    def confirm(self, annotator: str, item: Item, *, answer_id: str | None = None, given: float | None = None) -> str:
        """Record the item as seen with no (further) answer: its grid is written, so an item with no
        LLM-assigned reason completes with every untagged category at 0. An ``answer_id`` is
        applied once (as in :meth:`set_answer`); returns ``"stored"`` or ``"duplicate"``."""
        annotator = check_name(annotator)
        with transaction(self.conn):
            if self._received(answer_id) is not None:
                return "duplicate"
            now = time.time()
            self._ensure_grid(annotator, item, now)
            self._log("ui", annotator, item.decision_key, "confirmed", 1)
            return self._record_received(answer_id, annotator, item, "confirmed", 1, now if given is None
                                         else min(float(given), now), now, "stored")

    def sample_item(self, sample: str, dataset: str, task: str, qid: str) -> Item | None:
        """The item (dataset, task, qid) of ``sample`` as stored, or None."""
        row = self.conn.execute("SELECT * FROM items WHERE sample = ? AND dataset = ? AND task = ? AND qid = ?",
                                (sample, dataset, task, qid)).fetchone()
        return _item(row) if row else None

    def set_note(self, annotator: str, item: Item, *, note: str | None = None, proposed: str | None = None) -> None:
        """A free-text note and/or a proposed reason that is not in the typology (plain text)."""
        annotator = check_name(annotator)
        now = time.time()
        with transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO notes (annotator, run_id, dataset, task, qid, updated) "
                              "VALUES (?,?,?,?,?,?)", (annotator, *item.decision_key, now))
            for field, value in (("note", note), ("proposed", proposed)):
                if value is not None:
                    self.conn.execute(f"UPDATE notes SET {field} = ?, updated = ? WHERE annotator = ? AND run_id = ? "
                                      "AND dataset = ? AND task = ? AND qid = ?", (value, now, annotator,
                                                                                   *item.decision_key))
                    self._log("ui", annotator, item.decision_key, field, value)

    def saved(self, annotator: str, item: Item) -> dict[str, dict]:
        """``{category: {"value": human_applicable, "updated": time, "source": ...}}`` for one item as
        stored ({} before the first answer): what the page marks as saved."""
        return {r["category"]: {"value": r["human_applicable"], "updated": r["updated"], "source": r["source"]}
                for r in self.conn.execute(
                    "SELECT category, human_applicable, updated, source FROM decisions WHERE annotator = ? AND "
                    "run_id = ? AND dataset = ? AND task = ? AND qid = ?", (annotator, *item.decision_key))}

    def answers(self, annotator: str, item: Item) -> dict[str, int | None]:
        """``{category: human_applicable}`` for one item ({} before the first answer)."""
        return {c: v["value"] for c, v in self.saved(annotator, item).items()}

    def note(self, annotator: str, item: Item) -> dict:
        row = self.conn.execute("SELECT note, proposed, updated FROM notes WHERE annotator = ? AND run_id = ? AND "
                                "dataset = ? AND task = ? AND qid = ?", (annotator, *item.decision_key)).fetchone()
        return dict(row) if row else {"note": "", "proposed": "", "updated": None}

    def completed(self, annotator: str) -> set[tuple[str, str, str, str]]:
        """Decision keys (run_id, dataset, task, qid) of the items whose every LLM-assigned reason is marked."""
        return {(r["run_id"], r["dataset"], r["task"], r["qid"]) for r in self.conn.execute(
            "SELECT run_id, dataset, task, qid FROM decisions WHERE annotator = ? GROUP BY run_id, dataset, task, qid "
            "HAVING SUM(human_applicable IS NULL) = 0", (annotator,))}

    def annotators(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT annotator FROM decisions ORDER BY annotator")]

    def history(self, annotator: str | None = None) -> list[dict]:
        sql = "SELECT * FROM history" + (" WHERE annotator = ?" if annotator else "") + " ORDER BY id"
        return [dict(r) for r in self.conn.execute(sql, (annotator,) if annotator else ())]

    def proposals(self) -> list[dict]:
        return [dict(r) for r in self.conn.execute(
            "SELECT * FROM notes WHERE note != '' OR proposed != '' ORDER BY dataset, task, qid, annotator")]

    def match_run(self, dataset: str, task: str, qid: str, grid: dict[str, int]) -> sqlite3.Row | None:
        return match_run(self.conn, dataset, task, qid, grid)

    # ------------------------------------------------------------------------------- CSV
    def export_rows(self) -> list[dict]:
        """The answered cells (:data:`ANSWERED_CELLS`: complete items whole, partial items' answered
        cells), as the CSV has them (ints for the 0/1 columns): what the export, the report and the
        findings all read."""
        rows = self.conn.execute(f"SELECT * FROM ({ANSWERED_CELLS}) ORDER BY annotator, dataset, task, qid, run_id, "
                                 "category")
        out = [{c: r[c] for c in CSV_COLUMNS} for r in rows]
        unreadable = self._unreadable_now()
        for row in out:  # decisions written before issue 33 on an answer the reader no longer reads
            if row["llm_answer"] == "readable" and (row["run_id"], row["dataset"], row["task"], row["qid"]) in unreadable:
                row["llm_answer"] = "unreadable"
        return out

    def _unreadable_now(self) -> set[tuple[str, str, str, str]]:
        """Decision keys of the sampled items whose stored "ok" answer today's reader cannot read."""
        return {(r["run_id"], r["dataset"], r["task"], r["qid"]) for r in self.conn.execute(
            "SELECT DISTINCT run_id, dataset, task, qid, status, raw, categories FROM items "
            "WHERE status IN ('ok', ?) AND raw != ''", (UNKNOWN_CATEGORY,))
            if _reread(r["status"], r["raw"], json.loads(r["categories"])) == "unparseable"}

    def answered_queries(self) -> dict[str, int]:
        """How many (annotator, query) items the exported rows come from: ``complete`` (every cell),
        ``partial`` (an assigned reason still unmarked: only the cells answered so far) and
        ``rows`` (the answered cells); what the export, the report and the page say beside the figures."""
        complete_of, n_rows = {}, 0
        for r in self.conn.execute(f"SELECT annotator, run_id, dataset, task, qid, complete FROM ({ANSWERED_CELLS})"):
            complete_of[(r["annotator"], r["run_id"], r["dataset"], r["task"], r["qid"])] = r["complete"]
            n_rows += 1
        n_complete = sum(complete_of.values())
        return {"complete": n_complete, "partial": len(complete_of) - n_complete, "rows": n_rows}

    def export_csv(self, path: str | Path | None = None) -> str:
        text = csv_text(self.export_rows())
        if path is not None:
            from core.atomic import atomic_write_text
            atomic_write_text(path, text)
        return text

    def import_csv(self, path: str | Path, text: str | None = None) -> int:
        """Merge the rows of a CSV export; returns the number of rows written.

        The whole file is checked first (header, values, duplicate keys): an error names the file
        and line and nothing is stored. Imported rows replace the same (annotator, run_id, dataset,
        task, qid, category) and are logged in the history with the file name as source. Rows of a
        seven-column (pre-run) export are attributed to a run as the module docstring says.
        """
        rows = read_csv(path, text)
        source = f"import:{Path(path).name}"
        now = time.time()
        with transaction(self.conn):
            attribute_legacy_rows(self.conn, rows)
            for row in rows:
                key = (row["run_id"], row["dataset"], row["task"], row["qid"])
                self.conn.execute(
                    "INSERT OR REPLACE INTO decisions (annotator, run_id, dataset, task, qid, category, llm_assigned, "
                    "llm_answer, human_applicable, model, updated, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (row["annotator"], *key, row["category"], row["llm_assigned"], row["llm_answer"],
                     row["human_applicable"], row["model"], now, source))
                self._log(source, row["annotator"], key, f"category:{row['category']}", row["human_applicable"])
        return len(rows)
