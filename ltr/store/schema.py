"""The run store's tables and its schema as migrations (:mod:`core.db.migrations`); a change to the
schema is a new migration at the end of :data:`SCHEMA`. Also the SQL that summarises a series'
step rows into its ``step_series`` row (the migration that adds that table fills it with it)."""
from __future__ import annotations

from core.db import Migration, Schema

STATUSES = ("pending", "running", "completed", "failed", "cancelled")

_TABLES = """
CREATE TABLE IF NOT EXISTS experiments (
    name TEXT PRIMARY KEY,
    config_json TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    experiment TEXT,
    data TEXT NOT NULL,
    fold INTEGER NOT NULL,
    loss TEXT NOT NULL,
    model TEXT NOT NULL,
    seed INTEGER NOT NULL,
    config_json TEXT NOT NULL,
    status TEXT NOT NULL,
    device TEXT,
    pid INTEGER,
    host TEXT,
    created REAL NOT NULL,
    started REAL,
    heartbeat REAL,
    finished REAL,
    epochs_done INTEGER NOT NULL DEFAULT 0,
    total_epochs INTEGER,
    best_epoch INTEGER,
    train_seconds REAL,
    pretrain_seconds REAL,
    test_ndcg1 REAL, test_ndcg3 REAL, test_ndcg5 REAL, test_ndcg10 REAL,
    error TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_grid ON runs (data, model, loss, fold);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status);
CREATE TABLE IF NOT EXISTS step_metrics (
    run_id TEXT NOT NULL, name TEXT NOT NULL, step INTEGER NOT NULL, epoch INTEGER NOT NULL,
    value REAL,
    PRIMARY KEY (run_id, name, step)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS epoch_metrics (
    run_id TEXT NOT NULL, name TEXT NOT NULL, epoch INTEGER NOT NULL, value REAL,
    PRIMARY KEY (run_id, name, epoch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS query_results (
    run_id TEXT NOT NULL, metric TEXT NOT NULL, qid TEXT NOT NULL, value REAL,
    PRIMARY KEY (run_id, metric, qid)
) WITHOUT ROWID;
"""
_STEP_SERIES_TABLE = """
CREATE TABLE IF NOT EXISTS step_series (
    run_id TEXT NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL,
    first_step INTEGER NOT NULL, first_value REAL, last_step INTEGER NOT NULL, last_value REAL,
    negative INTEGER NOT NULL, zero INTEGER NOT NULL, positive INTEGER NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
"""
# The summary of the step rows matching ``{where}`` (a filter on step_metrics), in step_series' columns:
# counts and sign shares (a NULL value, i.e. a non-finite one, counts in n only), first and last row.
STEP_SERIES_SELECT = """
    WITH agg AS (
        SELECT run_id, name, COUNT(*) AS n, MIN(step) AS first_step, MAX(step) AS last_step,
               COALESCE(SUM(value < 0), 0) AS negative, COALESCE(SUM(value = 0), 0) AS zero,
               COALESCE(SUM(value > 0), 0) AS positive
        FROM step_metrics WHERE {where} GROUP BY run_id, name)
    SELECT agg.run_id, agg.name, agg.n, agg.first_step, f.value, agg.last_step, l.value,
           agg.negative, agg.zero, agg.positive
    FROM agg
    JOIN step_metrics f ON f.run_id = agg.run_id AND f.name = agg.name AND f.step = agg.first_step
    JOIN step_metrics l ON l.run_id = agg.run_id AND l.name = agg.name AND l.step = agg.last_step"""
STEP_SERIES_COLUMNS = ("run_id", "name", "n", "first_step", "first_value", "last_step", "last_value", "negative",
                        "zero", "positive")
# first step, last step and last value of one series (three index seeks): is its step_series row current?
SERIES_ENDS_SQL = """SELECT (SELECT MIN(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2),
                             (SELECT MAX(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2),
                             (SELECT value FROM step_metrics WHERE run_id = ?1 AND name = ?2 ORDER BY step DESC LIMIT 1)"""
# The store's schema as its migrations (core.db.migrations): a change is a new migration at the end.
# A store written before step_series existed gets it filled from its step rows (on a new store the
# back-fill inserts nothing).
SCHEMA = Schema("runs", (
    Migration.tables(1, "experiments, runs, step and epoch metrics, per-query results", _TABLES),
    Migration.columns(2, "runs", {"pid_started": "TEXT", "cpu_seconds": "REAL", "load_at_start": "REAL",
                                  "threads": "INTEGER"}, "liveness by process start time, cost, load, threads"),
    Migration.tables(3, "step_series: one summary row per series, filled from step_metrics", _STEP_SERIES_TABLE
                     + "INSERT OR IGNORE INTO step_series " + STEP_SERIES_SELECT.format(where="1") + ";\n"),
    # A loss's one-time pre-training (NeuralLoss's surrogate, shared by every run whose key is the same): whether
    # this run built it (1) or loaded it from the cache (0), and its key. NULL on older rows and on losses with
    # none; the cost figures then read the key from the stored config's loss provenance, if any (ltr.cost).
    Migration.columns(4, "runs", {"pretrain_paid": "INTEGER", "pretrain_key": "TEXT"},
                      "which run paid a shared one-time pre-training, and its key"),
    # The code that trained the run (issue 41: two stored runs did not reproduce, and nothing said which code
    # made them): the git commit of each training session ('mixed' when a resumed run's sessions differ),
    # whether tracked files had changes in any of them (1), and the numeric platform (torch version and the CPU
    # kernels it dispatched to: AVX2 and AVX-512 kernels round differently, so bits compare only on the same
    # one). NULL on older rows; commit and dirty NULL outside a git checkout.
    Migration.columns(5, "runs", {"code_commit": "TEXT", "code_dirty": "INTEGER", "code_platform": "TEXT"},
                      "the code that trained the run: commit, uncommitted changes, torch and CPU kernels"),
))

RUN_COLUMNS = (
    "run_id", "experiment", "data", "fold", "loss", "model", "seed", "status", "device", "pid", "host",
    "created", "started", "heartbeat", "finished", "epochs_done", "total_epochs", "best_epoch",
    "train_seconds", "pretrain_seconds", "test_ndcg1", "test_ndcg3", "test_ndcg5", "test_ndcg10", "error",
    "pid_started", "cpu_seconds", "load_at_start", "threads", "pretrain_paid", "pretrain_key", "code_commit",
    "code_dirty", "code_platform",
)
