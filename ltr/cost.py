"""Training cost against effectiveness per loss: the runs with their minutes, and the table behind the
Results page's NDCG-vs-time scatter (``ltr findings``' cost ranking and ``ltr export`` read it too)."""
from __future__ import annotations

import pandas as pd

from ltr.losses import LOSS_NAMES
from ltr.store import RunStore, latest_per_loss_and_fold


def completed_runs(store: RunStore, data: str, model: str, experiment: str | None = None) -> pd.DataFrame:
    """Completed runs of a data set and ranker with ``minutes`` = (training loop + NeuralLoss
    pre-training) / 60, ``cpu_minutes`` = the training loop's CPU time / 60, and their ``configuration``
    and ``variant`` labels (:func:`ltr.report.completed_runs`; ``experiment``: only that grid's runs)."""
    from ltr.report import completed_runs as labelled_runs

    runs = labelled_runs(store, data, model, experiment=experiment)
    runs["minutes"] = (runs["train_seconds"].astype(float).fillna(0.0)
                       + runs["pretrain_seconds"].astype(float).fillna(0.0)) / 60.0
    runs["cpu_minutes"] = runs["cpu_seconds"].astype(float) / 60.0
    return runs


def one_run_per_fold_and_seed(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per ``(loss, fold, seed)``: the latest finished (a configuration holds each once; a store
    written by hand may repeat one). Seeds are runs of their own: a fold trained with 3 seeds has 3."""
    if "seed" not in runs:
        return latest_per_loss_and_fold(runs)
    return runs.sort_values("finished").drop_duplicates(["loss", "fold", "seed"], keep="last")


def cost_effectiveness(runs: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Per loss: mean, standard deviation, min and max over its runs (folds x seeds) of test NDCG@k and of
    training minutes.

    One row per loss in the study's order; the standard deviation is the sample one (0 for one run).
    """
    column = f"test_ndcg{k}"
    if runs.empty:
        return pd.DataFrame(columns=["loss", "folds", "ndcg_mean", "ndcg_std", "ndcg_min", "ndcg_max", "minutes_mean",
                                     "minutes_std", "minutes_min", "minutes_max"])
    latest = one_run_per_fold_and_seed(runs)
    agg = latest.groupby("loss").agg(folds=("fold", "nunique"), ndcg_mean=(column, "mean"),
                                     ndcg_std=(column, "std"), ndcg_min=(column, "min"), ndcg_max=(column, "max"),
                                     minutes_mean=("minutes", "mean"), minutes_std=("minutes", "std"),
                                     minutes_min=("minutes", "min"), minutes_max=("minutes", "max"),
                                     ).fillna({"ndcg_std": 0.0, "minutes_std": 0.0})
    order = {name: i for i, name in enumerate(LOSS_NAMES)}
    return agg.reset_index().sort_values("loss", key=lambda s: s.map(lambda n: order.get(n, len(order))),
                                         ignore_index=True)


def in_configuration(runs: pd.DataFrame, configuration: str | None = None) -> pd.DataFrame:
    """The runs of one configuration (default: the significance table's, :func:`ltr.report.select_configuration`),
    one per (loss variant, fold), ``loss`` holding the variant label (``loss_name`` the loss)."""
    from ltr.report import select_configuration

    chosen, _label, _others = select_configuration(runs, configuration)
    return chosen.assign(loss_name=chosen["loss"], loss=chosen["variant"])
