"""LambdaMART: LightGBM's ``lambdarank`` objective, trained and stored as a run like every other.

Training (:func:`train_booster`, called by :func:`ltr.train.train_run` for model ``lambdamart``, which stores
its rounds and tests the trees kept: this package imports nothing of ``ltr.train``):

- the fold's splits as read for every run (``ltr.data.datasets.load_fold``: the same features, the same
  query-level normalisation), one LightGBM ``Dataset`` per split grouped by query;
- ``lgb.train`` with ``objective=lambdarank``, ``metric=ndcg``, ``eval_at=[1, 3, 5, 10]`` on the validation
  split (LightGBM's NDCG: gain ``2^y - 1`` by its default ``label_gain``, a query without a relevant document
  scores 1: the project's default convention), at most ``epochs`` boosting rounds;
- after each round a callback stores the round as an epoch (validation NDCG@k, seconds, CPU seconds), keeps
  the best round by validation NDCG@10 (strictly better to replace, as the neural loop) and stops
  ``patience`` rounds after it (0 = never): early stopping on validation NDCG@10; it also stops the run
  on a cancel request or SIGTERM (cancelled, like a neural run);
- the test split is scored by the trees up to the best round and evaluated by the same code as every run
  (``ltr.train.loop.evaluate``: ``ltr.metrics`` with the project's convention, ties by document order),
  so per-query NDCG@{1,3,5,10} and the number of relevant documents are stored as for a neural run.

Provenance: the stored config holds ``lightgbm`` (the LightGBM version and every parameter the booster was
trained with except its thread count, which the run records as ``threads``): a run trained by another
LightGBM version or other parameters is another configuration, refused rather than mixed.
``train_seconds`` and ``cpu_seconds`` are those of ``lgb.train`` (the boosting and its per-round validation;
the store writes of the callback are left out). A killed run starts over (no checkpoint: MQ2008's trees
take seconds).

LightGBM parameters (``model_params``; LightGBM's own defaults otherwise): only tree and boosting settings,
:data:`TREE_PARAMETERS`; anything else is refused with its name.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

OBJECTIVE = "lambdarank"
# The settings a run may give (LightGBM's names); objective, metric, seed and threads are the run's.
TREE_PARAMETERS = ("learning_rate", "num_leaves", "max_depth", "min_data_in_leaf", "min_sum_hessian_in_leaf",
                   "feature_fraction", "bagging_fraction", "bagging_freq", "lambda_l1", "lambda_l2",
                   "min_gain_to_split", "max_bin", "lambdarank_truncation_level", "lambdarank_norm",
                   "extra_trees", "path_smooth")


def booster_parameters(config) -> dict:
    """The LightGBM parameters of ``config``'s run (without the thread count): its model parameters over the
    fixed objective, metric and seed. Raises ``ValueError`` naming an unknown parameter."""
    unknown = sorted(set(config.model_params) - set(TREE_PARAMETERS))
    if unknown:
        raise ValueError(f"unknown LightGBM parameter(s) {unknown}; a lambdamart run takes {', '.join(TREE_PARAMETERS)}")
    from ltr.ndcg_conventions import NDCG_CUTOFFS

    return {**dict(sorted(config.model_params.items())), "objective": OBJECTIVE, "metric": "ndcg",
            "eval_at": list(NDCG_CUTOFFS), "seed": int(config.seed), "deterministic": True,
            "force_row_wise": True, "verbosity": -1}


def provenance(config) -> dict:
    import lightgbm

    return {"version": lightgbm.__version__, "parameters": booster_parameters(config),
            "rounds": {"most": config.epochs, "early_stopping": config.patience,
                       "on": "validation ndcg@10 (LightGBM's, exp gain, no relevant document = 1)"}}


def lgb_dataset(ds, reference=None):
    import lightgbm as lgb

    return lgb.Dataset(ds.features, label=ds.labels, group=np.diff(ds.query_ptr), reference=reference,
                       free_raw_data=False)


class BoosterRanker(nn.Module):
    """The trained trees as a ranker for ``ltr.train.loop.evaluate``: scores ``[B, n]`` (0 at padding)."""

    def __init__(self, booster, rounds: int):
        super().__init__()
        self.booster, self.rounds = booster, rounds

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        flat = features.reshape(-1, features.shape[-1]).cpu().numpy()
        scores = self.booster.predict(flat, num_iteration=self.rounds).reshape(mask.shape)
        return torch.from_numpy(scores).to(torch.float64).masked_fill(~mask.cpu(), 0.0)


@dataclass(frozen=True)
class Boosted:
    """A finished boosting: the trees, the round kept (best validation metric) and the cost of ``lgb.train``."""

    booster: object
    best_round: int
    train_seconds: float  # the boosting and its per-round validation, without the rounds' logging
    cpu_seconds: float


def train_booster(splits, config, threads: int, *, selection: str, log_round: Callable[[int, dict], None],
                  progress: Callable[[str], None], check_cancel: Callable[[], None]) -> Boosted:
    """Boost ``config``'s LambdaMART on ``splits['train']``, validated on ``splits['vali']`` after each round
    (see the module docstring): ``log_round(round, metrics)`` stores a round, ``check_cancel()`` raises to stop
    the run; the round kept is the best by ``selection`` (validation NDCG@10), strictly better to replace,
    and boosting stops ``config.patience`` rounds after it (0 = never). This module stores nothing itself."""
    import lightgbm as lgb

    train = lgb_dataset(splits["train"])
    vali = lgb_dataset(splits["vali"], reference=train)  # binned as the training data
    params = {**booster_parameters(config), "num_threads": int(threads)}
    state = {"best": -np.inf, "best_round": -1, "last": time.perf_counter(), "cpu": time.process_time(),
             "log_seconds": 0.0, "log_cpu": 0.0}

    def each_round(env) -> None:
        check_cancel()
        now, cpu = time.perf_counter(), time.process_time()
        seconds, cpu_seconds = now - state["last"], cpu - state["cpu"]
        metrics = {name: float(value) for _data, name, value, _higher in env.evaluation_result_list}
        selected = metrics[selection]
        if selected > state["best"]:
            state.update(best=selected, best_round=env.iteration)
        log_round(env.iteration, {**metrics, "seconds": seconds, "train_seconds": seconds, "cpu_seconds": cpu_seconds})
        progress(f"round {env.iteration}: vali ndcg@10 {selected:.4f} (best {state['best']:.4f} at "
                 f"{state['best_round']})")
        state["log_seconds"] += time.perf_counter() - now
        state["log_cpu"] += time.process_time() - cpu
        state["last"], state["cpu"] = time.perf_counter(), time.process_time()
        if config.patience and env.iteration - state["best_round"] >= config.patience:
            raise lgb.callback.EarlyStopException(state["best_round"], [])

    started, cpu_started = time.perf_counter(), time.process_time()
    booster = lgb.train(params, train, num_boost_round=config.epochs, valid_sets=[vali], valid_names=["vali"],
                        callbacks=[each_round])
    return Boosted(booster, state["best_round"], time.perf_counter() - started - state["log_seconds"],
                   time.process_time() - cpu_started - state["log_cpu"])
