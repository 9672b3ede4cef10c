"""Human annotation of LLM-assigned failure reasons: samples, answers, history, CSV export/import.

Storage: ``cache/annotations.sqlite`` (``core.db``: WAL, ``BEGIN IMMEDIATE``), kept apart from every
cache because it holds people's work. Every answer is one transaction, committed the moment it is
given, so a reload, a closed tab, a server restart or a second annotator writing at the same time
loses nothing.

Model of the data
-----------------
* **Item**: one hard query of one task -- (dataset, task, qid) -- with a snapshot of what the
  annotator sees: the query, its task context, the typology's categories and the LLM-assigned
  reasons with their justifications (copied from a typology run, so later runs cannot change it).
* **Sample**: named, ``size`` items (50 by default) drawn with ``seed``, stratified by task
  (proportional allocation, largest remainder, at least one per task that has items). By default
  one shared list that every annotator works through (agreement needs the same queries);
  ``per_annotator=True`` draws each annotator's own list with a seed derived from their name.
* **Decision**: one row per (annotator, dataset, task, qid, category) -- exactly the export's
  rows -- with ``llm_assigned`` (0/1) and ``human_applicable`` (0/1, NULL while an assigned reason
  is still unmarked). The first answer on an item writes its full grid: assigned categories start
  unmarked, the others start at 0 ("not tagged"). An item is *complete* when no row is unmarked; only
  complete items are exported and reported.
* **History**: every change (UI or import) is appended with its time and source; answers can be
  changed, nothing is overwritten without a trace. Notes and proposed new reasons are kept per item.

CSV: header exactly ``annotator,dataset,task,qid,category,llm_assigned,human_applicable``.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from core.db import SchemaStore, transaction
from core.paths import cache_dir
from pipeline.typology.categories import TASKS

CSV_COLUMNS = ("annotator", "dataset", "task", "qid", "category", "llm_assigned", "human_applicable")
DEFAULT_SAMPLE = "default"
DEFAULT_SIZE = 50
SHARED = ""  # the annotator column of a sample shared by everyone

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
  sample TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, run_id TEXT NOT NULL,
  model TEXT NOT NULL, query TEXT NOT NULL, context TEXT NOT NULL, categories TEXT NOT NULL, assigned TEXT NOT NULL,
  PRIMARY KEY (sample, dataset, task, qid));
CREATE TABLE IF NOT EXISTS samples (
  sample TEXT PRIMARY KEY, size INTEGER NOT NULL, seed INTEGER NOT NULL, per_annotator INTEGER NOT NULL,
  created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS queue (
  sample TEXT NOT NULL, annotator TEXT NOT NULL, position INTEGER NOT NULL,
  dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, PRIMARY KEY (sample, annotator, position));
CREATE TABLE IF NOT EXISTS decisions (
  annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, category TEXT NOT NULL,
  llm_assigned INTEGER NOT NULL CHECK (llm_assigned IN (0, 1)),
  human_applicable INTEGER CHECK (human_applicable IN (0, 1)),
  updated REAL NOT NULL, source TEXT NOT NULL,
  PRIMARY KEY (annotator, dataset, task, qid, category));
CREATE TABLE IF NOT EXISTS notes (
  annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '', proposed TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
  PRIMARY KEY (annotator, dataset, task, qid));
CREATE TABLE IF NOT EXISTS history (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, source TEXT NOT NULL, annotator TEXT NOT NULL,
  dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, field TEXT NOT NULL, value TEXT);
"""


class AnnotationError(ValueError):
    """Bad annotation input (a CSV file names its line); nothing was stored."""


@dataclass(frozen=True)
class Item:
    dataset: str
    task: str
    qid: str
    run_id: str
    model: str
    query: str
    context: str
    categories: list  # [{"name", "description"}]
    assigned: list  # [{"category", "justification"}]

    @property
    def key(self) -> tuple[str, str, str]:
        return self.dataset, self.task, self.qid

    @property
    def assigned_names(self) -> list[str]:
        return [a["category"] for a in self.assigned]


def default_path() -> Path:
    return cache_dir() / "annotations.sqlite"


def allocate(counts: dict[str, int], size: int) -> dict[str, int]:
    """Stratified allocation: proportional to ``counts``, largest remainder, at least one per
    non-empty stratum when ``size`` allows, never more than a stratum holds."""
    strata = {k: n for k, n in counts.items() if n > 0}
    total = sum(strata.values())
    size = min(size, total)
    if not strata or size <= 0:
        return {k: 0 for k in counts}
    exact = {k: size * n / total for k, n in strata.items()}
    out = {k: int(v) for k, v in exact.items()}
    if size >= len(strata):
        out = {k: max(v, 1) for k, v in out.items()}
    by_remainder = sorted(strata, key=lambda k: (-(exact[k] - int(exact[k])), k))
    while sum(out.values()) < size:
        for k in by_remainder:
            if sum(out.values()) < size and out[k] < strata[k]:
                out[k] += 1
    while sum(out.values()) > size:  # the "at least one" floor overshot: take from the largest
        k = max(out, key=lambda s: (out[s] - exact[s], s))
        out[k] -= 1
    return {k: out.get(k, 0) for k in counts}


def draw_sample(keys: Sequence[tuple[str, str, str]], size: int, seed: int) -> list[tuple[str, str, str]]:
    """``size`` item keys (dataset, task, qid) stratified by task, in a seeded shuffled order."""
    rng = random.Random(seed)
    by_task: dict[str, list] = {}
    for key in sorted(set(keys)):
        by_task.setdefault(key[1], []).append(key)
    quota = allocate({t: len(v) for t, v in by_task.items()}, size)
    chosen = [k for t, pool in sorted(by_task.items()) for k in rng.sample(pool, quota[t])]
    rng.shuffle(chosen)
    return chosen


def _annotator_seed(seed: int, annotator: str) -> int:
    return int(hashlib.sha256(f"{seed}:{annotator}".encode()).hexdigest()[:8], 16)


def _check_name(annotator: str) -> str:
    name = " ".join(str(annotator).split())
    if not name:
        raise AnnotationError("the annotator name is empty")
    if len(name) > 80 or "," in name:
        raise AnnotationError("an annotator name has at most 80 characters and no comma")
    return name


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
                "INSERT INTO items VALUES (?,?,?,?,?,?,?,?,?,?)",
                [(name, i.dataset, i.task, i.qid, i.run_id, i.model, i.query, i.context, json.dumps(i.categories),
                  json.dumps(i.assigned)) for i in items])
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
        annotator = _check_name(annotator)
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
                    self._write_queue(sample, owner, draw_sample(keys, meta["size"], _annotator_seed(meta["seed"], owner)))
        rows = self.conn.execute(
            "SELECT i.* FROM queue q JOIN items i ON i.sample = q.sample AND i.dataset = q.dataset "
            "AND i.task = q.task AND i.qid = q.qid WHERE q.sample = ? AND q.annotator = ? ORDER BY q.position",
            (sample, owner))
        return [Item(r["dataset"], r["task"], r["qid"], r["run_id"], r["model"], r["query"], r["context"],
                     json.loads(r["categories"]), json.loads(r["assigned"])) for r in rows]

    # ------------------------------------------------------------------------------- answers
    def _log(self, source, annotator, key, field, value) -> None:
        self.conn.execute("INSERT INTO history (at, source, annotator, dataset, task, qid, field, value) "
                          "VALUES (?,?,?,?,?,?,?,?)", (time.time(), source, annotator, *key, field,
                                                       None if value is None else str(value)))

    def _ensure_grid(self, annotator: str, item: Item, now: float) -> None:
        assigned = set(item.assigned_names)
        self.conn.executemany(
            "INSERT OR IGNORE INTO decisions VALUES (?,?,?,?,?,?,?,?, 'ui')",
            [(annotator, *item.key, c["name"], int(c["name"] in assigned), None if c["name"] in assigned else 0, now)
             for c in item.categories])

    def set_answer(self, annotator: str, item: Item, category: str, applicable: bool | None) -> None:
        """Record that ``category`` applies (or not) to ``item`` in ``annotator``'s view.

        For an LLM-assigned category this marks the reason correct / incorrect; for any other
        category it tags (untags) it as an applicable reason the LLM missed. ``None`` unmarks an
        assigned reason. Committed before returning.
        """
        annotator = _check_name(annotator)
        if category not in {c["name"] for c in item.categories}:
            raise AnnotationError(f"{category!r} is not a category of this item's typology")
        if applicable is None and category not in item.assigned_names:
            raise AnnotationError("only an LLM-assigned reason can be left unmarked")
        value = None if applicable is None else int(bool(applicable))
        now = time.time()
        with transaction(self.conn):
            self._ensure_grid(annotator, item, now)
            self.conn.execute("UPDATE decisions SET human_applicable = ?, updated = ?, source = 'ui' WHERE annotator = ? "
                              "AND dataset = ? AND task = ? AND qid = ? AND category = ?",
                              (value, now, annotator, *item.key, category))
            self._log("ui", annotator, item.key, f"category:{category}", value)

    def set_note(self, annotator: str, item: Item, *, note: str | None = None, proposed: str | None = None) -> None:
        """A free-text note and/or a proposed reason that is not in the typology (plain text)."""
        annotator = _check_name(annotator)
        now = time.time()
        with transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO notes (annotator, dataset, task, qid, updated) VALUES (?,?,?,?,?)",
                              (annotator, *item.key, now))
            for field, value in (("note", note), ("proposed", proposed)):
                if value is not None:
                    self.conn.execute(f"UPDATE notes SET {field} = ?, updated = ? WHERE annotator = ? AND dataset = ? "
                                      "AND task = ? AND qid = ?", (value, now, annotator, *item.key))
                    self._log("ui", annotator, item.key, field, value)

    def answers(self, annotator: str, key: tuple[str, str, str]) -> dict[str, int | None]:
        """``{category: human_applicable}`` for one item ({} before the first answer)."""
        return {r["category"]: r["human_applicable"] for r in self.conn.execute(
            "SELECT category, human_applicable FROM decisions WHERE annotator = ? AND dataset = ? AND task = ? "
            "AND qid = ?", (annotator, *key))}

    def note(self, annotator: str, key: tuple[str, str, str]) -> dict:
        row = self.conn.execute("SELECT note, proposed FROM notes WHERE annotator = ? AND dataset = ? AND task = ? "
                                "AND qid = ?", (annotator, *key)).fetchone()
        return dict(row) if row else {"note": "", "proposed": ""}

    def completed(self, annotator: str) -> set[tuple[str, str, str]]:
        """Items whose every LLM-assigned reason is marked."""
        return {(r["dataset"], r["task"], r["qid"]) for r in self.conn.execute(
            "SELECT dataset, task, qid FROM decisions WHERE annotator = ? GROUP BY dataset, task, qid "
            "HAVING SUM(human_applicable IS NULL) = 0", (annotator,))}

    def annotators(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT annotator FROM decisions ORDER BY annotator")]

    def history(self, annotator: str | None = None) -> list[dict]:
        sql = "SELECT * FROM history" + (" WHERE annotator = ?" if annotator else "") + " ORDER BY id"
        return [dict(r) for r in self.conn.execute(sql, (annotator,) if annotator else ())]

    def proposals(self) -> list[dict]:
        return [dict(r) for r in self.conn.execute(
            "SELECT * FROM notes WHERE note != '' OR proposed != '' ORDER BY dataset, task, qid, annotator")]

    # ------------------------------------------------------------------------------- CSV
    def export_rows(self) -> list[dict]:
        """The rows of complete items, as the CSV has them (ints for the 0/1 columns)."""
        rows = self.conn.execute(
            "SELECT d.* FROM decisions d JOIN (SELECT annotator, dataset, task, qid FROM decisions "
            "GROUP BY annotator, dataset, task, qid HAVING SUM(human_applicable IS NULL) = 0) c "
            "USING (annotator, dataset, task, qid) ORDER BY annotator, dataset, task, qid, category")
        return [{c: r[c] for c in CSV_COLUMNS} for r in rows]

    def export_csv(self, path: str | Path | None = None) -> str:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.export_rows())
        text = buffer.getvalue()
        if path is not None:
            from core.atomic import atomic_write_text
            atomic_write_text(path, text)
        return text

    def import_csv(self, path: str | Path, text: str | None = None) -> int:
        """Merge the rows of a CSV export; returns the number of rows written.

        The whole file is checked first (header, values, duplicate keys): an error names the file
        and line and nothing is stored. Imported rows replace the same (annotator, dataset, task,
        qid, category) and are logged in the history with the file name as source.
        """
        rows = read_csv(path, text)
        source = f"import:{Path(path).name}"
        now = time.time()
        with transaction(self.conn):
            for row in rows:
                key = (row["dataset"], row["task"], row["qid"])
                self.conn.execute("INSERT OR REPLACE INTO decisions VALUES (?,?,?,?,?,?,?,?,?)",
                                  (row["annotator"], *key, row["category"], row["llm_assigned"],
                                   row["human_applicable"], now, source))
                self._log(source, row["annotator"], key, f"category:{row['category']}", row["human_applicable"])
        return len(rows)


def read_csv(path: str | Path, text: str | None = None) -> list[dict]:
    """Validated rows of an annotation CSV (see the module docstring); AnnotationError otherwise."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise AnnotationError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or tuple(h.strip() for h in header) != CSV_COLUMNS:
        raise AnnotationError(f"{path}:1: the header must be exactly {','.join(CSV_COLUMNS)}")
    rows, seen = [], {}
    for line_no, fields in enumerate(reader, start=2):
        if not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(CSV_COLUMNS):
            raise AnnotationError(f"{path}:{line_no}: expected {len(CSV_COLUMNS)} fields, found {len(fields)}")
        row = dict(zip(CSV_COLUMNS, (f.strip() for f in fields)))
        for column in ("annotator", "dataset", "qid", "category"):
            if not row[column]:
                raise AnnotationError(f"{path}:{line_no}: empty {column}")
        if row["task"] not in TASKS:
            raise AnnotationError(f"{path}:{line_no}: task must be one of {', '.join(TASKS)}, got {row['task']!r}")
        for column in ("llm_assigned", "human_applicable"):
            if row[column] not in ("0", "1"):
                raise AnnotationError(f"{path}:{line_no}: {column} must be 0 or 1, got {row[column]!r}")
            row[column] = int(row[column])
        key = tuple(row[c] for c in CSV_COLUMNS[:5])
        if key in seen:
            raise AnnotationError(f"{path}:{line_no}: repeats the row of line {seen[key]} ({', '.join(key)})")
        seen[key] = line_no
        rows.append(row)
    return rows
