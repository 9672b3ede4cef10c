"""A stored run as the ``--out`` JSON: config, validation curve, loss-parameter trajectory, test."""
from __future__ import annotations

import math

import pandas as pd

from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.store import RunStore, ndcg_per_query


def run_summary(store: RunStore, run_id: str) -> dict:
    """A run as the ``--out`` JSON: config, validation per epoch, loss-parameter trajectory, test.

    Keys: ``run_id``, ``status``, ``config`` (result-defining fields + data signature), ``device``,
    ``best_epoch``, ``epochs_done``, ``validation``
    ``[{epoch, ndcg@1..@10, seconds, train_seconds, cpu_seconds, train_loss}]``,
    ``loss_parameters`` ``[{step, epoch, theta_g, ..., grad_theta_d, ...}]`` (empty for fixed
    losses), ``loss_parameters_tested`` ``{b_d: ..., ...}`` (at the end of the best validation epoch: the
    checkpoint that was tested; empty for fixed losses and runs trained before it was recorded) beside
    ``loss_parameters_last`` (the last logged step, up to ``patience`` epochs later), ``train_loss`` ``[{step, epoch, loss}]``, ``test`` ``{ndcg@k: mean}``,
    ``test_per_query_ndcg@10`` ``{qid: value}``, ``test_per_query`` ``{ndcg@k: {qid: value}}``,
    ``train_seconds``, ``pretrain_seconds``, ``pretrain_paid`` (1: this run built its loss's one-time pre-training,
    0: loaded it from the cache, None: none), ``pretrain_key`` (what runs sharing that pre-training have in
    common), ``error``.
    """
    run = store.get_run(run_id)
    names = store.step_metric_names(run_id)
    parameters = _parameter_names(names)
    epochs = store.epoch_series([run_id])
    epochs = epochs[~epochs["name"].isin(parameters)]
    validation = [{"epoch": int(e), **dict(zip(g["name"], g["value"]))} for e, g in epochs.groupby("epoch")]
    steps = store.step_series([run_id], names, max_points=10**9)
    trajectory = []
    if not steps.empty:
        wide = steps.pivot(index=["step", "epoch"], columns="name", values="value").reset_index()
        trajectory = [{k: (int(v) if k in ("step", "epoch") else _num(v)) for k, v in row.items()}
                      for row in wide.to_dict("records")]
    learned = loss_parameters_at_test(store, [run_id])
    per_query = {}
    for k in NDCG_CUTOFFS:
        pq = ndcg_per_query(store, [run_id], k)
        per_query[f"ndcg@{k}"] = {q: _num(v) for q, v in zip(pq["qid"], pq["value"])}
    return {
        "run_id": run_id,
        "status": run["status"],
        "config": run["config"],
        "device": run["device"],
        "best_epoch": run["best_epoch"],
        "epochs_done": run["epochs_done"],
        "validation": validation,
        "loss_parameters": [{k: v for k, v in r.items() if k != "loss"} for r in trajectory] if set(names) - {"loss"}
        else [],
        "loss_parameters_tested": _at(learned, "tested"),
        "loss_parameters_last": _at(learned, "last_step_value"),
        "train_loss": [{"step": r["step"], "epoch": r["epoch"], "loss": r.get("loss")} for r in trajectory],
        "test": {f"ndcg@{k}": run[f"test_ndcg{k}"] for k in NDCG_CUTOFFS},
        "test_per_query_ndcg@10": per_query["ndcg@10"],
        "test_per_query": per_query,
        "train_seconds": run["train_seconds"],
        "pretrain_seconds": run["pretrain_seconds"],
        "pretrain_paid": run.get("pretrain_paid"),
        "pretrain_key": run.get("pretrain_key"),
        "error": run["error"],
    }


def _parameter_names(step_names) -> list[str]:
    """The learned loss parameters among a run's step metrics (LearnDCG: theta_*, b_g, b_d, alpha)."""
    return [n for n in step_names if n != "loss" and not n.startswith("grad_")]


def loss_parameters_at_test(store: RunStore, run_ids) -> pd.DataFrame:
    """Per run and learned loss parameter: ``run_id, name, best_epoch, tested`` (its value at the end of the best
    validation epoch, i.e. in the model that was tested; NaN for a run trained before the trainer recorded it
    per epoch) and ``last_step, last_value`` (the last logged step's, after up to ``patience`` more epochs)."""
    cols = ["run_id", "name", "best_epoch", "tested", "last_step", "last_step_value"]
    rows = []
    for run_id in run_ids:
        run = store.get_run(run_id)
        names = _parameter_names(store.step_metric_names(run_id))
        if not names:
            continue
        ends = store.step_summary([run_id], names).set_index("name")
        epochs = store.epoch_series([run_id], names)
        best = run["best_epoch"]
        at_best = dict(zip(epochs.loc[epochs["epoch"] == best, "name"], epochs.loc[epochs["epoch"] == best, "value"]))
        for name in names:
            rows.append({"run_id": run_id, "name": name, "best_epoch": best, "tested": at_best.get(name, math.nan),
                         "last_step": int(ends.loc[name, "last_step"]),
                         "last_step_value": float(ends.loc[name, "last_value"])})
    return pd.DataFrame(rows, columns=cols)


def _at(table: pd.DataFrame, column: str) -> dict:
    return {name: _num(v) for name, v in zip(table["name"], table[column]) if not pd.isna(v)}


def _num(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None
