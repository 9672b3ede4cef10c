"""LambdaMART: LightGBM's ``lambdarank`` objective, trained and stored as a run like every other.

Training (:func:`train_booster`, called by :func:`ltr.train.train_run` for model ``lambdamart``):

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


def train_booster(prepared, store, threads: int, progress: Callable[[str], None], cancel) -> None:
    """Train ``prepared``'s LambdaMART run, store its rounds and its test result (see the module docstring)."""
    import lightgbm as lgb

    from ltr.train.config import RunCancelled
    from ltr.train.loop import EVAL_BATCH_SIZE, evaluate, make_batcher
    from ltr.train.run import SELECTION_METRIC, finish_with_test

    cfg, run_id = prepared.config, prepared.config.run_id
    store.truncate_after(run_id, step=0, epoch=0)  # no checkpoint: a restarted run starts over
    train = lgb_dataset(prepared.splits["train"])
    vali = lgb_dataset(prepared.splits["vali"], reference=train)  # binned as the training data
    params = {**booster_parameters(cfg), "num_threads": int(threads)}
    state = {"best": -np.inf, "best_round": -1, "last": time.perf_counter(), "cpu": time.process_time(),
             "store_seconds": 0.0, "store_cpu": 0.0}

    def each_round(env) -> None:
        if cancel is not None and cancel.is_set():
            raise RunCancelled("cancel requested")
        now, cpu = time.perf_counter(), time.process_time()
        seconds, cpu_seconds = now - state["last"], cpu - state["cpu"]
        metrics = {name: float(value) for _data, name, value, _higher in env.evaluation_result_list}
        selected = metrics[SELECTION_METRIC]
        if selected > state["best"]:
            state.update(best=selected, best_round=env.iteration)
        store.log_epoch(run_id, env.iteration, {**metrics, "seconds": seconds, "train_seconds": seconds,
                                                "cpu_seconds": cpu_seconds})
        progress(f"round {env.iteration}: vali ndcg@10 {selected:.4f} (best {state['best']:.4f} at "
                 f"{state['best_round']})")
        state["store_seconds"] += time.perf_counter() - now
        state["store_cpu"] += time.process_time() - cpu
        state["last"], state["cpu"] = time.perf_counter(), time.process_time()
        if cfg.patience and env.iteration - state["best_round"] >= cfg.patience:
            raise lgb.callback.EarlyStopException(state["best_round"], [])

    started, cpu_started = time.perf_counter(), time.process_time()
    booster = lgb.train(params, train, num_boost_round=cfg.epochs, valid_sets=[vali], valid_names=["vali"],
                        callbacks=[each_round])
    train_seconds = time.perf_counter() - started - state["store_seconds"]
    cpu_seconds = time.process_time() - cpu_started - state["store_cpu"]
    ranker = BoosterRanker(booster, state["best_round"] + 1)
    test = prepared.splits["test"]
    per_query = evaluate(ranker, make_batcher(test, torch.device("cpu"), EVAL_BATCH_SIZE), test.n_queries)
    finish_with_test(store, run_id, test, per_query.cpu(), train_seconds=train_seconds, cpu_seconds=cpu_seconds,
                     pretrain_seconds=None, best_epoch=state["best_round"], progress=progress)
