"""The annotation CSV: writing an export and reading (checking) one for import.

CSV: header ``annotator,dataset,task,qid,category,llm_assigned,human_applicable,run_id,model,llm_answer``
(:data:`CSV_COLUMNS`). Import also accepts the older seven-column header (:data:`LEGACY_CSV_COLUMNS`,
without the run): such rows are attributed to the run the store knows for that query whose assignment
matches the rows' ``llm_assigned`` exactly (:meth:`AnnotationStore.match_run`), else to run ``""``
(unknown), and a query of them with no assigned reason gets ``llm_answer = unknown`` (an old export
wrote an unreadable assignment as "no reason assigned", so it cannot count as a true negative).
"""
from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

from pipeline.annotation.items import LLM_ANSWERS, AnnotationError
from pipeline.annotation.migrations import match_run
from pipeline.typology.categories import TASKS

CSV_COLUMNS = ("annotator", "dataset", "task", "qid", "category", "llm_assigned", "human_applicable", "run_id",
               "model", "llm_answer")
LEGACY_CSV_COLUMNS = CSV_COLUMNS[:7]  # exports made before decisions were keyed by run


def csv_text(rows: list[dict]) -> str:
    """The CSV of export rows (:meth:`pipeline.annotation.store.AnnotationStore.export_rows`)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def attribute_legacy_rows(conn: sqlite3.Connection, rows: list[dict]) -> None:
    """Fill run_id, model and llm_answer of rows read from a seven-column CSV (``run_id is None``)."""
    grids: dict[tuple, dict[str, int]] = {}
    for row in rows:
        if row["run_id"] is None:
            grids.setdefault((row["annotator"], row["dataset"], row["task"], row["qid"]), {})[row["category"]] = \
                row["llm_assigned"]
    found = {group: match_run(conn, *group[1:], grid) for group, grid in grids.items()}
    for row in rows:
        if row["run_id"] is None:
            group = (row["annotator"], row["dataset"], row["task"], row["qid"])
            match = found[group]
            row["run_id"], row["model"] = (match["run_id"], match["model"]) if match else ("", "")
            row["llm_answer"] = "readable" if any(grids[group].values()) else "unknown"


def read_csv(path: str | Path, text: str | None = None) -> list[dict]:
    """Validated rows of an annotation CSV (see the module docstring); AnnotationError otherwise.

    Rows of a seven-column export have ``run_id``, ``model`` and ``llm_answer`` None (the store
    attributes them on import)."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise AnnotationError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    header = tuple(h.strip() for h in header) if header is not None else None
    if header not in (CSV_COLUMNS, LEGACY_CSV_COLUMNS):
        raise AnnotationError(f"{path}:1: the header must be exactly {','.join(CSV_COLUMNS)} (or, from an export "
                              f"made before runs were recorded, {','.join(LEGACY_CSV_COLUMNS)})")
    rows, seen = [], {}
    for line_no, fields in enumerate(reader, start=2):
        if not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise AnnotationError(f"{path}:{line_no}: expected {len(header)} fields, found {len(fields)}")
        row = {"run_id": None, "model": None, "llm_answer": None, **dict(zip(header, (f.strip() for f in fields)))}
        for column in ("annotator", "dataset", "qid", "category"):
            if not row[column]:
                raise AnnotationError(f"{path}:{line_no}: empty {column}")
        if row["task"] not in TASKS:
            raise AnnotationError(f"{path}:{line_no}: task must be one of {', '.join(TASKS)}, got {row['task']!r}")
        for column in ("llm_assigned", "human_applicable"):
            if row[column] not in ("0", "1"):
                raise AnnotationError(f"{path}:{line_no}: {column} must be 0 or 1, got {row[column]!r}")
            row[column] = int(row[column])
        if header == CSV_COLUMNS and row["llm_answer"] not in LLM_ANSWERS:
            raise AnnotationError(f"{path}:{line_no}: llm_answer must be one of {', '.join(LLM_ANSWERS)}, "
                                  f"got {row['llm_answer']!r}")
        key = (row["annotator"], row["run_id"] or "", *(row[c] for c in ("dataset", "task", "qid", "category")))
        if key in seen:
            raise AnnotationError(f"{path}:{line_no}: repeats the row of line {seen[key]} ({', '.join(key)})")
        seen[key] = line_no
        rows.append(row)
    return rows
