"""The annotation store's schema as its migrations (:mod:`core.db.migrations`): the tables as first
released (main at d166808), then each change in order. A change to the schema is a new migration at
the end; the steps of migrations 2 and 3 are in :mod:`pipeline.annotation.migrations`."""
from __future__ import annotations

from core.db import Migration, Schema, has_columns
from pipeline.annotation.migrations import before_unknown_category, migrate_run_key, migrate_unknown_category

FIRST_TABLES = """
CREATE TABLE IF NOT EXISTS items (sample TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  run_id TEXT NOT NULL, model TEXT NOT NULL, query TEXT NOT NULL, context TEXT NOT NULL, categories TEXT NOT NULL,
  assigned TEXT NOT NULL, PRIMARY KEY (sample, dataset, task, qid));
CREATE TABLE IF NOT EXISTS samples (sample TEXT PRIMARY KEY, size INTEGER NOT NULL, seed INTEGER NOT NULL,
  per_annotator INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS queue (sample TEXT NOT NULL, annotator TEXT NOT NULL, position INTEGER NOT NULL,
  dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, PRIMARY KEY (sample, annotator, position));
CREATE TABLE IF NOT EXISTS decisions (annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL,
  qid TEXT NOT NULL, category TEXT NOT NULL, llm_assigned INTEGER NOT NULL CHECK (llm_assigned IN (0, 1)),
  human_applicable INTEGER CHECK (human_applicable IN (0, 1)), updated REAL NOT NULL, source TEXT NOT NULL,
  PRIMARY KEY (annotator, dataset, task, qid, category));
CREATE TABLE IF NOT EXISTS notes (annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '', proposed TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
  PRIMARY KEY (annotator, dataset, task, qid));
CREATE TABLE IF NOT EXISTS history (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, source TEXT NOT NULL,
  annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, field TEXT NOT NULL, value TEXT);
"""
RECEIVED_ANSWERS = """
CREATE TABLE IF NOT EXISTS received_answers (
  answer_id TEXT PRIMARY KEY, annotator TEXT NOT NULL, run_id TEXT NOT NULL, dataset TEXT NOT NULL,
  task TEXT NOT NULL, qid TEXT NOT NULL, field TEXT NOT NULL, value INTEGER, given REAL NOT NULL,
  received REAL NOT NULL, outcome TEXT NOT NULL);
"""

SCHEMA = Schema("annotations", (
    Migration.tables(1, "items, samples, queues, decisions, notes, history", FIRST_TABLES),
    Migration(2, "decisions, notes and history keyed by typology run; items keep the assignment's status, raw "
                 "answer and generator", migrate_run_key, has_columns("decisions", "run_id")),
    Migration(3, "the unknown_category answer: items.unknown, decisions accept it", migrate_unknown_category,
              lambda conn: not before_unknown_category(conn)),
    Migration.tables(4, "answers received by id (sent again by a browser)", RECEIVED_ANSWERS),
))
