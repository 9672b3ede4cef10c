"""The run store's writers: registering and claiming runs, logging their series and results, failing,
deleting and reaping them, each one short ``BEGIN IMMEDIATE`` transaction."""
from __future__ import annotations

import json
import os
import socket
import time
from typing import Iterable, Mapping, Sequence

import numpy as np

from core.db import transaction
from core.processes import proc_start_time
from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.store.errors import RunBusy, RunConfigMismatch, UnknownRun
from ltr.store.liveness import STALE_AFTER_SECONDS, run_is_live
from ltr.store.summaries import recompute_step_series, update_step_series


class RunWrites:
    """The writing half of :class:`ltr.store.RunStore` (``self.conn``: its connection)."""

    def register_experiment(self, name: str, config: Mapping) -> None:
        """Record an experiment (a grid) by name; re-registering with a new config updates it."""
        with transaction(self.conn) as c:
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
        with transaction(self.conn) as c:
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
        with transaction(self.conn) as c:
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
        with transaction(self.conn) as c:
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
        with transaction(self.conn) as c:
            c.executemany("INSERT OR REPLACE INTO step_metrics (run_id, name, step, epoch, value)"
                          " VALUES (?, ?, ?, ?, ?)", flat)
            update_step_series(c, flat)
            c.executemany("UPDATE runs SET heartbeat = ? WHERE run_id = ?", [(now, r) for r in beat])

    def log_epoch(self, run_id: str, epoch: int, metrics: Mapping[str, float]) -> None:
        """Record one finished epoch's metrics (validation NDCG@k, wall seconds, ...)."""
        with transaction(self.conn) as c:
            c.executemany("INSERT OR REPLACE INTO epoch_metrics (run_id, name, epoch, value) VALUES (?, ?, ?, ?)",
                          [(run_id, k, int(epoch), _finite_or_none(v)) for k, v in metrics.items()])
            c.execute("UPDATE runs SET epochs_done = MAX(epochs_done, ?), heartbeat = ? WHERE run_id = ?",
                      (int(epoch) + 1, time.time(), run_id))

    def truncate_after(self, run_id: str, *, step: int, epoch: int) -> None:
        """Forget series points logged after a checkpoint (``step`` and ``epoch`` exclusive).

        Called when a run resumes from a checkpoint, so nothing from the lost part remains.
        """
        with transaction(self.conn) as c:
            c.execute("DELETE FROM step_metrics WHERE run_id = ? AND step >= ?", (run_id, step))
            recompute_step_series(c, [(run_id, None)])
            c.execute("DELETE FROM epoch_metrics WHERE run_id = ? AND epoch >= ?", (run_id, epoch))
            c.execute("UPDATE runs SET epochs_done = ? WHERE run_id = ?", (epoch, run_id))

    def record_code(self, run_id: str, commit: str | None, dirty: bool | None, platform: str | None = None) -> None:
        """The code of this training session of the run: its commit and numeric platform (each ``mixed`` once two
        sessions' differ) and whether it had uncommitted changes (dirty in any session stays dirty)."""
        with transaction(self.conn) as c:
            c.execute("UPDATE runs SET code_commit = CASE WHEN code_commit IS NULL OR code_commit = ? THEN ? "
                      "ELSE 'mixed' END, code_dirty = MAX(COALESCE(code_dirty, 0), ?), "
                      "code_platform = CASE WHEN code_platform IS NULL OR code_platform = ? THEN ? ELSE 'mixed' END "
                      "WHERE run_id = ?",
                      (commit, commit, None if dirty is None else int(bool(dirty)), platform, platform, run_id))

    def finish_run(self, run_id: str, *, test_means: Mapping[str, float],
                   per_query: Mapping[str, Mapping[str, float]], train_seconds: float,
                   pretrain_seconds: float | None = None, best_epoch: int | None = None,
                   cpu_seconds: float | None = None, pretrain_paid: bool | None = None,
                   pretrain_key: str | None = None) -> None:
        """Store test results and mark the run completed, all in one transaction.

        ``test_means`` uses keys ``ndcg@1`` ... ``ndcg@10``; ``per_query`` maps a metric name to
        ``{qid: value}``. ``pretrain_seconds`` is the loss's one-time pre-training (the original time, also
        where this run loaded it from the cache), ``pretrain_paid`` whether this run built it, ``pretrain_key``
        what runs sharing it have in common (None: the loss has no pre-training).
        """
        cols = {f"test_ndcg{k}": _finite_or_none(test_means.get(f"ndcg@{k}")) for k in NDCG_CUTOFFS}
        rows = [(run_id, metric, str(qid), _finite_or_none(v))
                for metric, values in per_query.items() for qid, v in values.items()]
        with transaction(self.conn) as c:
            c.execute("DELETE FROM query_results WHERE run_id = ?", (run_id,))
            c.executemany("INSERT INTO query_results (run_id, metric, qid, value) VALUES (?, ?, ?, ?)", rows)
            c.execute(
                "UPDATE runs SET status = 'completed', finished = ?, heartbeat = ?, train_seconds = ?,"
                " pretrain_seconds = ?, pretrain_paid = ?, pretrain_key = ?, best_epoch = ?, cpu_seconds = ?,"
                " error = NULL, test_ndcg1 = ?, test_ndcg3 = ?, test_ndcg5 = ?, test_ndcg10 = ? WHERE run_id = ?",
                (time.time(), time.time(), train_seconds, pretrain_seconds,
                 None if pretrain_paid is None else int(bool(pretrain_paid)), pretrain_key, best_epoch, cpu_seconds,
                 cols["test_ndcg1"], cols["test_ndcg3"], cols["test_ndcg5"], cols["test_ndcg10"], run_id),
            )

    def fail_run(self, run_id: str, error: str, *, status: str = "failed", only_running: bool = False) -> bool:
        """Mark the run failed (or ``cancelled``) with its error text; True when a row changed.

        ``only_running`` leaves a run alone that is no longer ``running`` (one that completed, or
        that its trainer already marked), checked in the same write transaction.
        """
        assert status in ("failed", "cancelled")
        with transaction(self.conn) as c:
            return c.execute("UPDATE runs SET status = ?, error = ?, finished = ? WHERE run_id = ?"
                             + (" AND status = 'running'" if only_running else ""),
                             (status, error[-4000:], time.time(), run_id)).rowcount > 0

    def delete_run(self, run_id: str) -> bool:
        """Remove a run and every series/result it recorded (``train --force``); True if it existed."""
        with transaction(self.conn) as c:
            for table in ("step_metrics", "step_series", "epoch_metrics", "query_results"):
                c.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            return c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount > 0

    def reap_stale_runs(self, *, stale_after: float = STALE_AFTER_SECONDS) -> list[str]:
        """Mark ``running`` runs whose process is gone as failed; returns their ids.

        A run of this host is gone only when its recorded pid no longer exists or is now another
        process (start time differs): a live trainer with a late heartbeat is left alone. A run of
        another host is gone when its heartbeat is older than ``stale_after`` seconds. Called by
        commands that resume or train, never by listing commands (a listing does not change state).
        """
        now = time.time()
        reaped = []
        with transaction(self.conn) as c:
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


def _finite_or_none(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None
