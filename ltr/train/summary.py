"""A stored run as the ``--out`` JSON: config, validation curve, loss-parameter trajectory, test."""
from __future__ import annotations

import math

from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.store import RunStore, ndcg_per_query


def run_summary(store: RunStore, run_id: str) -> dict:
    """A run as the ``--out`` JSON: config, validation per epoch, loss-parameter trajectory, test.

    Keys: ``run_id``, ``status``, ``config`` (result-defining fields + data signature), ``device``,
    ``best_epoch``, ``epochs_done``, ``validation``
    ``[{epoch, ndcg@1..@10, seconds, train_seconds, cpu_seconds, train_loss}]``,
    ``loss_parameters`` ``[{step, epoch, theta_g, ..., grad_theta_d, ...}]`` (empty for fixed
    losses), ``train_loss`` ``[{step, epoch, loss}]``, ``test`` ``{ndcg@k: mean}``,
    ``test_per_query_ndcg@10`` ``{qid: value}``, ``test_per_query`` ``{ndcg@k: {qid: value}}``,
    ``train_seconds``, ``pretrain_seconds``, ``pretrain_paid`` (1: this run built its loss's one-time pre-training,
    0: loaded it from the cache, None: none), ``pretrain_key`` (what runs sharing that pre-training have in
    common), ``error``.
    """
    run = store.get_run(run_id)
    epochs = store.epoch_series([run_id])
    validation = [{"epoch": int(e), **dict(zip(g["name"], g["value"]))} for e, g in epochs.groupby("epoch")]
    names = store.step_metric_names(run_id)
    steps = store.step_series([run_id], names, max_points=10**9)
    trajectory = []
    if not steps.empty:
        wide = steps.pivot(index=["step", "epoch"], columns="name", values="value").reset_index()
        trajectory = [{k: (int(v) if k in ("step", "epoch") else _num(v)) for k, v in row.items()}
                      for row in wide.to_dict("records")]
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


def _num(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None
