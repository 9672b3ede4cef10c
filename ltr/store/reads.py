"""The run store's readers: runs, their series (downsampled in SQL, or read incrementally for live
charts), summaries, epochs, per-query results and counts. Reading writes nothing."""
from __future__ import annotations

import json
from typing import Sequence

import numpy as np
import pandas as pd

from ltr.ndcg_conventions import metric_name
from ltr.store.downsampling import SPREAD_SQL, STRIDE_SQL, concat_series, series_frame
from ltr.store.errors import UnknownRun
from ltr.store.schema import RUN_COLUMNS, SERIES_ENDS_SQL, STATUSES, STEP_SERIES_COLUMNS, STEP_SERIES_SELECT


class RunReads:
    """The reading half of :class:`ltr.store.RunStore` (``self.conn``: its connection; ``self._live``: its
    :class:`ltr.store.live.LiveSeries`)."""

    def get_run(self, run_id: str) -> dict:
        row = self.conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise UnknownRun(run_id)
        out = dict(row)
        out["config"] = json.loads(out.pop("config_json"))
        return out

    def find_run(self, run_id: str) -> dict | None:
        """Like :meth:`get_run` but None when the run is not stored."""
        try:
            return self.get_run(run_id)
        except UnknownRun:
            return None

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
        frame = pd.DataFrame([dict(r) for r in self.conn.execute(sql, args).fetchall()],
                             columns=list(RUN_COLUMNS) + (["config_json"] if with_config else []))
        if with_config:
            frame["config"] = [json.loads(s) for s in frame.pop("config_json")]
        return frame

    def pretraining_runs(self) -> pd.DataFrame:
        """The completed runs whose loss had a one-time pre-training (``pretrain_seconds`` set: NeuralLoss's
        surrogate), every data set, ranker and experiment: ``run_id, experiment, pretrain_seconds,
        pretrain_paid, pretrain_key, config`` (what :func:`ltr.cost.pretraining_shares` shares that cost by)."""
        columns = ["run_id", "experiment", "pretrain_seconds", "pretrain_paid", "pretrain_key"]
        rows = self.conn.execute(f"SELECT {', '.join(columns)}, config_json FROM runs WHERE status = 'completed'"
                                 " AND pretrain_seconds IS NOT NULL").fetchall()
        frame = pd.DataFrame([dict(r) for r in rows], columns=columns + ["config_json"])
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
                    rows = self.conn.execute(
                        "SELECT step, epoch, value FROM step_metrics WHERE run_id = ? AND name = ? ORDER BY step",
                        (run_id, name)).fetchall()
                else:
                    rows = self.conn.execute(SPREAD_SQL, (max(max_points, 2), lo, hi, run_id, name)).fetchall()
                frames.append(series_frame(run_id, name, rows))
        return concat_series(frames)

    def step_range(self, run_id: str, name: str) -> tuple[int, int] | None:
        """``(first, last)`` logged step of one series (two index seeks), None when it has none."""
        row = self.conn.execute(
            "SELECT (SELECT MIN(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2),"
            " (SELECT MAX(step) FROM step_metrics WHERE run_id = ?1 AND name = ?2)", (run_id, name)).fetchone()
        return None if row[0] is None else (int(row[0]), int(row[1]))

    def step_points(self, run_id: str, name: str, start: int, stop: int, stride: int) -> list[tuple[int, int, float]]:
        """``(step, epoch, value)`` of the first logged row at or after each of ``start, start + stride, ...
        <= stop`` (one index seek each; rows found twice are returned once)."""
        return [tuple(r) for r in self.conn.execute(STRIDE_SQL, (start, stride, stop, run_id, name)).fetchall()]

    def live_step_series(self, run_ids: Sequence[str], names: Sequence[str], *, max_points: int = 1000) -> pd.DataFrame:
        """Like :meth:`step_series` for charts redrawn while runs train, read incrementally
        (:meth:`live_step_points`), as one frame ``(run_id, name, step, epoch, value)``."""
        points = self.live_step_points(run_ids, names, max_points=max_points)
        return concat_series([series_frame(run_id, name, arr) for (run_id, name), arr in points.items()])

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
        rows = self.conn.execute(f"SELECT run_id, fold FROM runs WHERE run_id IN ({','.join('?' * len(run_ids))})",
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
        stored = {(r["run_id"], r["name"]): dict(r) for r in self.conn.execute(
            f"SELECT {', '.join(cols)} FROM step_series WHERE run_id IN ({marks_r}) AND name IN ({marks_n})",
            [*run_ids, *names])}
        out = []
        for run_id in sorted(set(run_ids)):
            for name in sorted(set(names)):
                first, last, last_value = self.conn.execute(SERIES_ENDS_SQL, (run_id, name)).fetchone()
                if first is None:
                    continue
                row = stored.get((run_id, name))
                if row is None or (row["first_step"], row["last_step"], row["last_value"]) != (first, last, last_value):
                    fresh = self.conn.execute(STEP_SERIES_SELECT.format(where="run_id = ? AND name = ?"),
                                               (run_id, name)).fetchone()
                    row = dict(zip(STEP_SERIES_COLUMNS, fresh))
                out.append(row)
        return pd.DataFrame(out, columns=cols)

    def step_metric_names(self, run_id: str) -> list[str]:
        return [r[0] for r in self.conn.execute(
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
        rows = self.conn.execute(sql + " ORDER BY run_id, name, epoch", args).fetchall()
        return pd.DataFrame([dict(r) for r in rows], columns=["run_id", "name", "epoch", "value"])

    def per_query(self, run_ids: Sequence[str], metric: str = "ndcg@10") -> pd.DataFrame:
        """Per-query test results ``(run_id, qid, value)`` of the given runs for one metric."""
        if not run_ids:
            return pd.DataFrame(columns=["run_id", "qid", "value"])
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: 200 queries x hundreds of runs for one significance table
        rows = cursor.execute(
            f"SELECT run_id, qid, value FROM query_results WHERE metric = ? AND run_id IN "
            f"({','.join('?' * len(run_ids))}) ORDER BY run_id, qid", [metric, *run_ids]).fetchall()
        return pd.DataFrame(rows, columns=["run_id", "qid", "value"])

    def counts(self) -> dict[str, int]:
        """Number of runs per status (every status present, zero where none)."""
        out = {s: 0 for s in STATUSES}
        for row in self.conn.execute("SELECT status, COUNT(*) AS n FROM runs GROUP BY status"):
            out[row["status"]] = row["n"]
        return out

    def experiments(self) -> pd.DataFrame:
        rows = self.conn.execute("SELECT name, config_json, created FROM experiments ORDER BY created").fetchall()
        return pd.DataFrame([dict(r) for r in rows], columns=["name", "config_json", "created"])


def latest_per_loss_and_fold(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per ``(loss, fold)`` of a :meth:`RunStore.list_runs` frame: the latest finished.

    Where a fold was rerun (other hyper-parameters or seeds), tables and tests use the latest run.
    """
    return runs.sort_values("finished").drop_duplicates(["loss", "fold"], keep="last")


def ndcg_per_query(store: "RunStore", run_ids: Sequence[str], k: int) -> pd.DataFrame:
    """Per-query test NDCG@k under the default convention, ``(run_id, qid, value)``: stored as
    ``ndcg@k(gain=exp,norel=1)``; runs stored before names carried conventions have it as ``ndcg@k``."""
    named = store.per_query(list(run_ids), metric_name(k))
    legacy = [r for r in run_ids if r not in set(named["run_id"])]
    return pd.concat([named, store.per_query(legacy, f"ndcg@{k}")], ignore_index=True) if legacy else named
