"""The run store: every LTR training run, its metric series and its per-query test results.

SQLite in WAL mode (``cache/runs.sqlite`` by default) so the dashboard reads while trainers write,
and several trainer processes can write at once (each write is one short ``BEGIN IMMEDIATE``
transaction). This module is the dashboard's contract: pages read through the ``list_runs``,
``step_series``, ``epoch_series``, ``per_query`` and ``counts`` methods and never write SQL.

Tables (long format, so new metrics need no migration):

- ``runs``: one row per run id (a hash of the result-defining config): config JSON, status
  (``pending | running | completed | failed | cancelled``), device, pid, host, timings, heartbeat,
  best epoch, test NDCG@{1,3,5,10} means, error text.
- ``step_metrics(run_id, name, step, epoch, value)``: training loss and loss-parameter trajectories.
- ``step_series(run_id, name, n, first_step, first_value, last_step, last_value, negative, zero,
  positive)``: one summary row per series, kept by the write path (:meth:`RunStore.log_steps_many`,
  :meth:`RunStore.truncate_after`), so the drift diagnostic reads a row per series instead of
  aggregating every step (28k steps x 6 series x 5 folds on every live refresh, before).
- ``epoch_metrics(run_id, name, epoch, value)``: validation NDCG@k, wall time per epoch.
- ``query_results(run_id, metric, qid, value)``: per-query test metrics (for paired t-tests).
"""
from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from core.db import Migration, Schema, open_store, transaction
from core.processes import proc_start_time
from core.paths import cache_dir
from ltr.conventions import metric_name
from ltr.cutoffs import NDCG_CUTOFFS

STATUSES = ("pending", "running", "completed", "failed", "cancelled")
# A running run whose heartbeat is older than this (and whose process is gone) is reaped as failed.
STALE_AFTER_SECONDS = 120.0

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
_STEP_SERIES_SELECT = """
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
_STEP_SERIES_COLUMNS = ("run_id", "name", "n", "first_step", "first_value", "last_step", "last_value", "negative",
                        "zero", "positive")
# first step, last step and last value of one series (three index seeks): is its step_series row current?
_SERIES_ENDS_SQL = """SELECT (SELECT MIN(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2),
                             (SELECT MAX(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2),
                             (SELECT value FROM step_metrics WHERE run_id = ?1 AND name = ?2 ORDER BY step DESC LIMIT 1)"""
# The store's schema as its migrations (core.db.migrations): a change is a new migration at the end.
# A store written before step_series existed gets it filled from its step rows (on a new store the
# back-fill inserts nothing).
SCHEMA = Schema("runs", (
    Migration.tables(1, "experiments, runs, step and epoch metrics, per-query results", _TABLES, first_table="runs"),
    Migration.columns(2, "runs", {"pid_started": "TEXT", "cpu_seconds": "REAL", "load_at_start": "REAL",
                                  "threads": "INTEGER"}, "liveness by process start time, cost, load, threads"),
    Migration.tables(3, "step_series: one summary row per series, filled from step_metrics", _STEP_SERIES_TABLE
                     + "INSERT OR IGNORE INTO step_series " + _STEP_SERIES_SELECT.format(where="1") + ";\n",
                     first_table="step_series"),
))

RUN_COLUMNS = (
    "run_id", "experiment", "data", "fold", "loss", "model", "seed", "status", "device", "pid", "host",
    "created", "started", "heartbeat", "finished", "epochs_done", "total_epochs", "best_epoch",
    "train_seconds", "pretrain_seconds", "test_ndcg1", "test_ndcg3", "test_ndcg5", "test_ndcg10", "error",
    "pid_started", "cpu_seconds", "load_at_start", "threads",
)


class RunConfigMismatch(ValueError):
    """A run id already stored with a different configuration."""


class RunBusy(RuntimeError):
    """The run is being trained by another live process."""


class UnknownRun(KeyError):
    """No run with that id in the store."""


def canonical_data(data: str) -> str:
    """A registry name lower-cased (synthetic options sorted, options at their default dropped), a
    folder as its absolute path, so that equal runs get equal ids."""
    from ltr.data.datasets import DATASETS
    from ltr.data.synthetic import PRESETS

    name, sep, options = data.partition(":")
    if name.lower() in DATASETS:
        name = name.lower()
        defaults = {"seed": 0, "n_queries": PRESETS[name].n_queries, "conflict": 0} if name in PRESETS else {}
        items = []
        for option in filter(None, (o.strip() for o in options.split(","))):
            key, eq, value = (part.strip() for part in option.partition("="))
            if not eq:
                items.append(option)  # malformed: kept as written so the data layer reports it
                continue
            if value.isdigit() and defaults.get(key) == int(value):
                continue  # spelled out at its default: the same data as leaving it out
            items.append(f"{key}={int(value) if value.isdigit() else value}")
        return name + (":" + ",".join(sorted(items)) if items else "")
    path = Path(data).expanduser()
    return str(path.resolve()) if path.exists() else data


def default_store_path() -> Path:
    return cache_dir() / "runs.sqlite"


def _same_process_alive(pid: int | None, started: str | None) -> bool:
    """Whether ``pid`` exists and, when its start time was recorded, is still that same process
    (a pid reused by another process after the trainer died does not count)."""
    now_started = proc_start_time(pid)
    return now_started is not None and (not started or now_started == started)


def run_is_live(run: Mapping, *, stale_after: float = STALE_AFTER_SECONDS) -> bool:
    """Whether a stored run (a :meth:`RunStore.get_run` row) is being trained by a live process now.

    On this host the process decides: the recorded pid alive and the same process (start time) is
    live however late its heartbeat (a loaded machine delays heartbeats, it does not kill trainers),
    and a dead or reused pid is not live however recent the heartbeat. A run of another host can
    only be judged by its heartbeat (younger than ``stale_after`` seconds).
    """
    if run.get("status") != "running":
        return False
    if run.get("host") == socket.gethostname():
        return _same_process_alive(run.get("pid"), run.get("pid_started"))
    return run.get("heartbeat") is not None and time.time() - run["heartbeat"] <= stale_after


def latest_per_loss_and_fold(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per ``(loss, fold)`` of a :meth:`RunStore.list_runs` frame: the latest finished.

    Where a fold was rerun (other hyper-parameters or seeds), tables and tests use the latest run.
    """
    return runs.sort_values("finished").drop_duplicates(["loss", "fold"], keep="last")


class RunStore:
    """Read/write access to the run store at ``path`` (default ``cache/runs.sqlite``)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_store_path()
        self._conn = open_store(self.path, SCHEMA)
        self._live = _LiveSeries()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ writers
    def register_experiment(self, name: str, config: Mapping) -> None:
        """Record an experiment (a grid) by name; re-registering with a new config updates it."""
        with transaction(self._conn) as c:
            c.execute(
                "INSERT INTO experiments (name, config_json, created) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET config_json = excluded.config_json",
                (name, json.dumps(config, sort_keys=True), time.time()),
            )

    def register_run(self, run_id: str, config: Mapping, *, experiment: str | None = None,
                     total_epochs: int | None = None) -> str:
        """Create the run as ``pending`` unless it exists; returns its current status.

        Raises :class:`RunConfigMismatch` when ``run_id`` is stored with a different config, and
        writes nothing in that case.
        """
        config_json = json.dumps(config, sort_keys=True)
        with transaction(self._conn) as c:
            row = c.execute("SELECT config_json, status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is not None:
                if row["config_json"] != config_json:
                    raise RunConfigMismatch(
                        f"run {run_id} is stored with a different configuration; "
                        f"stored {row['config_json']} vs new {config_json}")
                if experiment is not None:
                    c.execute("UPDATE runs SET experiment = COALESCE(experiment, ?) WHERE run_id = ?",
                              (experiment, run_id))
                return row["status"]
            c.execute(
                "INSERT INTO runs (run_id, experiment, data, fold, loss, model, seed, config_json, status,"
                " created, total_epochs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                (run_id, experiment, str(config["data"]), int(config["fold"]), str(config["loss"]),
                 str(config["model"]), int(config.get("seed", 0)), config_json, time.time(), total_epochs),
            )
            return "pending"

    def start_run(self, run_id: str, *, device: str, pid: int | None = None, host: str | None = None,
                  pid_started: str | None = None, load: float | None = None, threads: int | None = None) -> None:
        """Claim the run for process ``pid`` on ``host`` (default: this process) and mark it running.

        ``host`` is given when the trainer runs on another machine than the store (a Ray worker
        writing through :mod:`ltr.remote_store`); its ``pid_started`` and ``load`` then come from that
        machine too, so liveness checks judge the trainer, not the writer.
        Records the process's start time (so a reused pid is never taken for the trainer) and the
        machine's 1-minute load average now and the CPU threads the trainer runs on (so a slow run can
        be explained: :mod:`core.threads`). A resumed run keeps
        its first start time. Raises :class:`RunBusy` when another live process holds it (checked
        in the same write transaction, so two trainers of one run cannot both start).
        """
        now = time.time()
        pid = pid if pid is not None else os.getpid()
        if host is None:
            host, pid_started = socket.gethostname(), proc_start_time(pid)
            try:
                load = os.getloadavg()[0]
            except OSError:
                load = None
        with transaction(self._conn) as c:
            row = c.execute("SELECT status, pid, pid_started, host, heartbeat FROM runs WHERE run_id = ?",
                            (run_id,)).fetchone()
            if row is not None and (row["pid"], row["host"]) != (pid, host) and run_is_live(dict(row)):
                raise RunBusy(f"run {run_id} is being trained by pid {row['pid']} on {row['host']}")
            cur = c.execute(
                "UPDATE runs SET status = 'running', device = ?, pid = ?, pid_started = ?, host = ?, heartbeat = ?,"
                " started = COALESCE(started, ?), load_at_start = ?, threads = ?, finished = NULL, error = NULL"
                " WHERE run_id = ?",
                (device, pid, pid_started, host, now, now, load, threads, run_id),
            )
            if cur.rowcount == 0:
                raise UnknownRun(run_id)

    def heartbeat(self, run_id: str) -> None:
        with transaction(self._conn) as c:
            c.execute("UPDATE runs SET heartbeat = ? WHERE run_id = ?", (time.time(), run_id))

    def log_steps(self, run_id: str, rows: Iterable[tuple[int, int, Mapping[str, float]]]) -> None:
        """Append step metrics: ``rows`` of ``(step, epoch, {name: value})``.

        Re-logging a step (after a resume) replaces its values, so a resumed run's series equals an
        uninterrupted one's.
        """
        rows = list(rows)
        if any(values for _step, _epoch, values in rows):
            self.log_steps_many({run_id: rows})

    def log_steps_many(self, batch: Mapping[str, Sequence[tuple[int, int, Mapping[str, float]]]],
                       heartbeats: Iterable[str] = ()) -> None:
        """:meth:`log_steps` for several runs plus heartbeats of others, in one transaction.

        What :class:`ltr.remote_store.StoreService` writes per flush for all the remote runs.
        """
        flat = [(run_id, name, int(step), int(epoch), _finite_or_none(value))
                for run_id, rows in batch.items() for step, epoch, values in rows for name, value in values.items()]
        beat = sorted(set(batch) | set(heartbeats))
        if not beat:
            return
        now = time.time()
        with transaction(self._conn) as c:
            c.executemany("INSERT OR REPLACE INTO step_metrics (run_id, name, step, epoch, value)"
                          " VALUES (?, ?, ?, ?, ?)", flat)
            _update_step_series(c, flat)
            c.executemany("UPDATE runs SET heartbeat = ? WHERE run_id = ?", [(now, r) for r in beat])

    def log_epoch(self, run_id: str, epoch: int, metrics: Mapping[str, float]) -> None:
        """Record one finished epoch's metrics (validation NDCG@k, wall seconds, ...)."""
        with transaction(self._conn) as c:
            c.executemany("INSERT OR REPLACE INTO epoch_metrics (run_id, name, epoch, value) VALUES (?, ?, ?, ?)",
                          [(run_id, k, int(epoch), _finite_or_none(v)) for k, v in metrics.items()])
            c.execute("UPDATE runs SET epochs_done = MAX(epochs_done, ?), heartbeat = ? WHERE run_id = ?",
                      (int(epoch) + 1, time.time(), run_id))

    def truncate_after(self, run_id: str, *, step: int, epoch: int) -> None:
        """Forget series points logged after a checkpoint (``step`` and ``epoch`` exclusive).

        Called when a run resumes from a checkpoint, so nothing from the lost part remains.
        """
        with transaction(self._conn) as c:
            c.execute("DELETE FROM step_metrics WHERE run_id = ? AND step >= ?", (run_id, step))
            _recompute_step_series(c, [(run_id, None)])
            c.execute("DELETE FROM epoch_metrics WHERE run_id = ? AND epoch >= ?", (run_id, epoch))
            c.execute("UPDATE runs SET epochs_done = ? WHERE run_id = ?", (epoch, run_id))

    def finish_run(self, run_id: str, *, test_means: Mapping[str, float],
                   per_query: Mapping[str, Mapping[str, float]], train_seconds: float,
                   pretrain_seconds: float | None = None, best_epoch: int | None = None,
                   cpu_seconds: float | None = None) -> None:
        """Store test results and mark the run completed, all in one transaction.

        ``test_means`` uses keys ``ndcg@1`` ... ``ndcg@10``; ``per_query`` maps a metric name to
        ``{qid: value}``.
        """
        cols = {f"test_ndcg{k}": _finite_or_none(test_means.get(f"ndcg@{k}")) for k in NDCG_CUTOFFS}
        rows = [(run_id, metric, str(qid), _finite_or_none(v))
                for metric, values in per_query.items() for qid, v in values.items()]
        with transaction(self._conn) as c:
            c.execute("DELETE FROM query_results WHERE run_id = ?", (run_id,))
            c.executemany("INSERT INTO query_results (run_id, metric, qid, value) VALUES (?, ?, ?, ?)", rows)
            c.execute(
                "UPDATE runs SET status = 'completed', finished = ?, heartbeat = ?, train_seconds = ?,"
                " pretrain_seconds = ?, best_epoch = ?, cpu_seconds = ?, error = NULL, test_ndcg1 = ?,"
                " test_ndcg3 = ?, test_ndcg5 = ?, test_ndcg10 = ? WHERE run_id = ?",
                (time.time(), time.time(), train_seconds, pretrain_seconds, best_epoch, cpu_seconds,
                 cols["test_ndcg1"], cols["test_ndcg3"], cols["test_ndcg5"], cols["test_ndcg10"], run_id),
            )

    def fail_run(self, run_id: str, error: str, *, status: str = "failed", only_running: bool = False) -> bool:
        """Mark the run failed (or ``cancelled``) with its error text; True when a row changed.

        ``only_running`` leaves a run alone that is no longer ``running`` (one that completed, or
        that its trainer already marked), checked in the same write transaction.
        """
        assert status in ("failed", "cancelled")
        with transaction(self._conn) as c:
            return c.execute("UPDATE runs SET status = ?, error = ?, finished = ? WHERE run_id = ?"
                             + (" AND status = 'running'" if only_running else ""),
                             (status, error[-4000:], time.time(), run_id)).rowcount > 0

    def delete_run(self, run_id: str) -> bool:
        """Remove a run and every series/result it recorded (``train --force``); True if it existed."""
        with transaction(self._conn) as c:
            for table in ("step_metrics", "step_series", "epoch_metrics", "query_results"):
                c.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            return c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount > 0

    def find_run(self, run_id: str) -> dict | None:
        """Like :meth:`get_run` but None when the run is not stored."""
        try:
            return self.get_run(run_id)
        except UnknownRun:
            return None

    def reap_stale_runs(self, *, stale_after: float = STALE_AFTER_SECONDS) -> list[str]:
        """Mark ``running`` runs whose process is gone as failed; returns their ids.

        A run of this host is gone only when its recorded pid no longer exists or is now another
        process (start time differs): a live trainer with a late heartbeat is left alone. A run of
        another host is gone when its heartbeat is older than ``stale_after`` seconds. Called by
        commands that resume or train, never by listing commands (a listing does not change state).
        """
        now = time.time()
        reaped = []
        with transaction(self._conn) as c:
            for row in c.execute("SELECT run_id, pid, pid_started, host, heartbeat, status FROM runs"
                                 " WHERE status = 'running'").fetchall():
                if run_is_live(dict(row), stale_after=stale_after):
                    continue
                why = (f"process {row['pid']} died" if row["host"] == socket.gethostname()
                       else f"no heartbeat from {row['host']} for {stale_after:.0f} s")
                c.execute("UPDATE runs SET status = 'failed', finished = ?, error = ? WHERE run_id = ?",
                          (now, f"{why} (last heartbeat {row['heartbeat']}); resume it to continue", row["run_id"]))
                reaped.append(row["run_id"])
        return reaped

    # ------------------------------------------------------------------ readers
    def get_run(self, run_id: str) -> dict:
        row = self._conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise UnknownRun(run_id)
        out = dict(row)
        out["config"] = json.loads(out.pop("config_json"))
        return out

    def list_runs(self, *, experiment: str | None = None, data: str | Sequence[str] | None = None,
                  fold: int | Sequence[int] | None = None, loss: str | Sequence[str] | None = None,
                  model: str | Sequence[str] | None = None, status: str | Sequence[str] | None = None,
                  run_ids: Sequence[str] | None = None, with_config: bool = False) -> pd.DataFrame:
        """Runs matching every given filter (a value or a list of values), newest first."""
        where, args = [], []
        for column, value in (("experiment", experiment), ("data", data), ("fold", fold), ("loss", loss),
                              ("model", model), ("status", status), ("run_id", run_ids)):
            if value is None:
                continue
            values = [value] if isinstance(value, (str, int, np.integer)) else list(value)
            values = [int(v) if isinstance(v, np.integer) else v for v in values]
            if not values:
                return pd.DataFrame(columns=list(RUN_COLUMNS))
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            args.extend(values)
        cols = ", ".join(RUN_COLUMNS + (("config_json",) if with_config else ()))
        sql = f"SELECT {cols} FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY created DESC"
        frame = pd.DataFrame([dict(r) for r in self._conn.execute(sql, args).fetchall()],
                             columns=list(RUN_COLUMNS) + (["config_json"] if with_config else []))
        if with_config:
            frame["config"] = [json.loads(s) for s in frame.pop("config_json")]
        return frame

    def step_series(self, run_ids: Sequence[str], names: Sequence[str], *, max_points: int = 2000) -> pd.DataFrame:
        """Step metrics ``(run_id, name, step, epoch, value)``, at most ``max_points`` per run and name.

        Downsampled in the query: the first logged row at or after each of ``max_points`` evenly
        spaced steps from the first to the last (both kept), found by index seeks, so the cost does
        not grow with the series' length.
        """
        frames = []
        for run_id in run_ids:
            for name in names:
                span = self.step_range(run_id, name)
                if span is None:
                    continue
                lo, hi = span
                if max_points >= hi - lo + 1:
                    rows = self._conn.execute(
                        "SELECT step, epoch, value FROM step_metrics WHERE run_id = ? AND name = ? ORDER BY step",
                        (run_id, name)).fetchall()
                else:
                    rows = self._conn.execute(_SPREAD_SQL, (max(max_points, 2), lo, hi, run_id, name)).fetchall()
                frames.append(_series_frame(run_id, name, rows))
        return _concat_series(frames)

    def step_range(self, run_id: str, name: str) -> tuple[int, int] | None:
        """``(first, last)`` logged step of one series (two index seeks), None when it has none."""
        row = self._conn.execute(
            "SELECT (SELECT MIN(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2),"
            " (SELECT MAX(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2)", (run_id, name)).fetchone()
        return None if row[0] is None else (int(row[0]), int(row[1]))

    def step_points(self, run_id: str, name: str, start: int, stop: int, stride: int) -> list[tuple[int, int, float]]:
        """``(step, epoch, value)`` of the first logged row at or after each of ``start, start + stride, ...
        <= stop`` (one index seek each; rows found twice are returned once)."""
        return [tuple(r) for r in self._conn.execute(_STRIDE_SQL, (start, stride, stop, run_id, name)).fetchall()]

    def live_step_series(self, run_ids: Sequence[str], names: Sequence[str], *, max_points: int = 1000) -> pd.DataFrame:
        """Like :meth:`step_series` for charts redrawn while runs train, read incrementally
        (:meth:`live_step_points`), as one frame ``(run_id, name, step, epoch, value)``."""
        points = self.live_step_points(run_ids, names, max_points=max_points)
        return _concat_series([_series_frame(run_id, name, arr) for (run_id, name), arr in points.items()])

    def live_step_points(self, run_ids: Sequence[str], names: Sequence[str], *,
                         max_points: int = 1000) -> dict[tuple[str, str], np.ndarray]:
        """Per series with rows, ``{(run_id, name): array of (step, epoch, value) rows}`` (float, NaN
        for a non-finite value), for charts redrawn while runs train.

        Points lie on a grid ``first + k * stride`` (``stride`` grows with the series so that at most
        ``max_points`` points are drawn, the last logged row included). This store remembers each
        series' points between calls: a call reads only the grid points logged since the previous
        one (index seeks), and re-reads a series only when its stride grows or it was truncated (a
        resumed run). Arrays, not a frame: a chart redrawn every 2 s needs no per-series DataFrame.
        """
        out = {}
        for run_id in run_ids:
            for name in names:
                rows = self._live.read(self, run_id, name, max_points)
                if rows:
                    out[(run_id, name)] = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
        return out

    def run_folds(self, run_ids: Sequence[str]) -> dict[str, int]:
        """``{run_id: fold}`` of the stored runs among ``run_ids``."""
        if not run_ids:
            return {}
        rows = self._conn.execute(f"SELECT run_id, fold FROM runs WHERE run_id IN ({','.join('?' * len(run_ids))})",
                                  list(run_ids)).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def step_summary(self, run_ids: Sequence[str], names: Sequence[str]) -> pd.DataFrame:
        """Per run and step metric: ``run_id, name, n`` (logged steps), ``first_step, last_step,
        first_value, last_value`` and the counts of logged values ``negative, zero, positive``.

        Read from the ``step_series`` row each series has, after three index seeks check that the row
        still describes the series (its first step, last step and last value). A series written past
        its summary -- by a trainer of an older version still running when the store was upgraded, or
        by hand -- is aggregated from its rows instead, so the answer is never stale; reading writes
        nothing."""
        cols = ["run_id", "name", "n", "first_step", "last_step", "first_value", "last_value", "negative", "zero",
                "positive"]
        if not run_ids or not names:
            return pd.DataFrame(columns=cols)
        marks_r, marks_n = ",".join("?" * len(run_ids)), ",".join("?" * len(names))
        stored = {(r["run_id"], r["name"]): dict(r) for r in self._conn.execute(
            f"SELECT {', '.join(cols)} FROM step_series WHERE run_id IN ({marks_r}) AND name IN ({marks_n})",
            [*run_ids, *names])}
        out = []
        for run_id in sorted(set(run_ids)):
            for name in sorted(set(names)):
                first, last, last_value = self._conn.execute(_SERIES_ENDS_SQL, (run_id, name)).fetchone()
                if first is None:
                    continue
                row = stored.get((run_id, name))
                if row is None or (row["first_step"], row["last_step"], row["last_value"]) != (first, last, last_value):
                    fresh = self._conn.execute(_STEP_SERIES_SELECT.format(where="run_id = ? AND name = ?"),
                                               (run_id, name)).fetchone()
                    row = dict(zip(_STEP_SERIES_COLUMNS, fresh))
                out.append(row)
        return pd.DataFrame(out, columns=cols)

    def step_metric_names(self, run_id: str) -> list[str]:
        return [r[0] for r in self._conn.execute(
            "SELECT DISTINCT name FROM step_metrics WHERE run_id = ? ORDER BY name", (run_id,))]

    def epoch_series(self, run_ids: Sequence[str], names: Sequence[str] | None = None) -> pd.DataFrame:
        """Epoch metrics ``(run_id, name, epoch, value)`` of the given runs."""
        if not run_ids:
            return pd.DataFrame(columns=["run_id", "name", "epoch", "value"])
        sql = f"SELECT run_id, name, epoch, value FROM epoch_metrics WHERE run_id IN ({','.join('?' * len(run_ids))})"
        args = list(run_ids)
        if names is not None:
            sql += f" AND name IN ({','.join('?' * len(names))})"
            args += list(names)
        rows = self._conn.execute(sql + " ORDER BY run_id, name, epoch", args).fetchall()
        return pd.DataFrame([dict(r) for r in rows], columns=["run_id", "name", "epoch", "value"])

    def per_query(self, run_ids: Sequence[str], metric: str = "ndcg@10") -> pd.DataFrame:
        """Per-query test results ``(run_id, qid, value)`` of the given runs for one metric."""
        if not run_ids:
            return pd.DataFrame(columns=["run_id", "qid", "value"])
        cursor = self._conn.cursor()
        cursor.row_factory = None  # plain tuples: 200 queries x hundreds of runs for one significance table
        rows = cursor.execute(
            f"SELECT run_id, qid, value FROM query_results WHERE metric = ? AND run_id IN "
            f"({','.join('?' * len(run_ids))}) ORDER BY run_id, qid", [metric, *run_ids]).fetchall()
        return pd.DataFrame(rows, columns=["run_id", "qid", "value"])

    def counts(self) -> dict[str, int]:
        """Number of runs per status (every status present, zero where none)."""
        out = {s: 0 for s in STATUSES}
        for row in self._conn.execute("SELECT status, COUNT(*) AS n FROM runs GROUP BY status"):
            out[row["status"]] = row["n"]
        return out

    def experiments(self) -> pd.DataFrame:
        rows = self._conn.execute("SELECT name, config_json, created FROM experiments ORDER BY created").fetchall()
        return pd.DataFrame([dict(r) for r in rows], columns=["name", "config_json", "created"])


# The first row at or after each of ?1 evenly spaced steps from ?2 to ?3 (both ends included).
_SPREAD_SQL = """
WITH RECURSIVE grid(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM grid WHERE i + 1 < ?1)
SELECT DISTINCT m.step, m.epoch, m.value FROM grid JOIN step_metrics m
  ON m.run_id = ?4 AND m.name = ?5 AND m.step = (
     SELECT s.step FROM step_metrics s WHERE s.run_id = ?4 AND s.name = ?5
       AND s.step >= CAST(ROUND(?2 + grid.i * (?3 - ?2) * 1.0 / (?1 - 1)) AS INTEGER) ORDER BY s.step LIMIT 1)
ORDER BY m.step
"""
# The first row at or after each of ?1, ?1 + ?2, ... <= ?3.
_STRIDE_SQL = """
WITH RECURSIVE grid(x) AS (SELECT ?1 UNION ALL SELECT x + ?2 FROM grid WHERE x + ?2 <= ?3)
SELECT DISTINCT m.step, m.epoch, m.value FROM grid JOIN step_metrics m
  ON m.run_id = ?4 AND m.name = ?5 AND m.step = (
     SELECT s.step FROM step_metrics s WHERE s.run_id = ?4 AND s.name = ?5 AND s.step >= grid.x
       ORDER BY s.step LIMIT 1)
ORDER BY m.step
"""


def _series_frame(run_id: str, name: str, rows) -> pd.DataFrame:
    arr = rows if isinstance(rows, np.ndarray) else np.asarray([tuple(r) for r in rows], dtype=np.float64).reshape(-1, 3)
    return pd.DataFrame({"run_id": run_id, "name": name, "step": arr[:, 0].astype(np.int64),
                         "epoch": arr[:, 1].astype(np.int64), "value": arr[:, 2]})


def _concat_series(frames: list[pd.DataFrame]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame(columns=["run_id", "name", "step", "epoch", "value"])
    return pd.concat(frames, ignore_index=True)


class _LiveSeries:
    """Per series: the grid points read so far (see :meth:`RunStore.live_step_series`)."""

    def __init__(self):
        self._series: dict[tuple[str, str], dict] = {}

    def read(self, store: RunStore, run_id: str, name: str, max_points: int) -> list[tuple[int, int, float]]:
        span = store.step_range(run_id, name)
        if span is None:
            self._series.pop((run_id, name), None)
            return []
        lo, hi = span
        stride = max(1, -(-(hi - lo + 1) // max(max_points, 2)))  # ceil: at most max_points grid points
        known = self._series.get((run_id, name))
        if known is None or known["stride"] != stride or known["lo"] != lo or hi < known["hi"]:
            known = {"stride": stride, "lo": lo, "hi": lo - 1, "next": lo, "points": []}
            self._series[(run_id, name)] = known
        if known["next"] <= hi:
            new = store.step_points(run_id, name, known["next"], hi, stride)
            seen = known["points"][-1][0] if known["points"] else None
            known["points"].extend(p for p in new if p[0] != seen)
            known["next"] += stride * ((hi - known["next"]) // stride + 1)
        known["hi"] = hi
        points = known["points"]
        if points and points[-1][0] == hi:
            return list(points)
        tail = store.step_points(run_id, name, hi, hi, 1)
        # The last logged row always shows; a grid point is dropped to keep at most max_points.
        return points[: max_points - 1] + tail if len(points) >= max_points else points + tail


def _update_step_series(c: sqlite3.Connection, flat: Sequence[tuple[str, str, int, int, float | None]]) -> None:
    """Fold newly logged step rows ``(run_id, name, step, epoch, value)`` into their ``step_series``
    summaries, inside the caller's transaction. Rows after a series' last step (training going on)
    are added to it; a batch that re-logs a step already stored (or one step twice) replaces values,
    so those series are recomputed from their rows instead."""
    batches: dict[tuple[str, str], list[tuple[int, float | None]]] = {}
    for run_id, name, step, _epoch, value in flat:
        batches.setdefault((run_id, name), []).append((step, value))
    if not batches:
        return
    run_ids = sorted({r for r, _ in batches})
    known = {(r["run_id"], r["name"]): r for r in c.execute(
        f"SELECT * FROM step_series WHERE run_id IN ({','.join('?' * len(run_ids))})", run_ids)}
    upserts, recompute = [], []
    for key, rows in batches.items():
        steps = [step for step, _ in rows]
        old = known.get(key)
        if len(set(steps)) != len(steps) or (old is not None and min(steps) <= old["last_step"]):
            recompute.append(key)
            continue
        rows.sort()
        values = [v for _, v in rows if v is not None]
        new = {"n": len(rows), "first_step": rows[0][0], "first_value": rows[0][1], "last_step": rows[-1][0],
               "last_value": rows[-1][1], "negative": sum(v < 0 for v in values), "zero": sum(v == 0 for v in values),
               "positive": sum(v > 0 for v in values)}
        if old is not None:
            new.update(n=old["n"] + new["n"], first_step=old["first_step"], first_value=old["first_value"],
                       negative=old["negative"] + new["negative"], zero=old["zero"] + new["zero"],
                       positive=old["positive"] + new["positive"])
        upserts.append((*key, new["n"], new["first_step"], new["first_value"], new["last_step"], new["last_value"],
                        new["negative"], new["zero"], new["positive"]))
    c.executemany("INSERT OR REPLACE INTO step_series (run_id, name, n, first_step, first_value, last_step, "
                  "last_value, negative, zero, positive) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", upserts)
    if recompute:
        _recompute_step_series(c, recompute)


def _recompute_step_series(c: sqlite3.Connection, keys: Sequence[tuple[str, str | None]]) -> None:
    """Rebuild the ``step_series`` rows of ``(run_id, name)`` (name None: every series of the run) from
    their step rows (after a truncation, or a batch that replaced stored steps)."""
    for run_id, name in keys:
        where, args = ("run_id = ?", (run_id,)) if name is None else ("run_id = ? AND name = ?", (run_id, name))
        c.execute(f"DELETE FROM step_series WHERE {where}", args)
        c.execute("INSERT INTO step_series " + _STEP_SERIES_SELECT.format(where=where), args)


def _finite_or_none(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def ndcg_per_query(store: "RunStore", run_ids: Sequence[str], k: int) -> pd.DataFrame:
    """Per-query test NDCG@k under the default convention, ``(run_id, qid, value)``: stored as
    ``ndcg@k(gain=exp,norel=1)``; runs stored before names carried conventions have it as ``ndcg@k``."""
    named = store.per_query(list(run_ids), metric_name(k))
    legacy = [r for r in run_ids if r not in set(named["run_id"])]
    return pd.concat([named, store.per_query(legacy, f"ndcg@{k}")], ignore_index=True) if legacy else named
