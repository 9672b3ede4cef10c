"""Training cost against effectiveness per loss: the runs with their minutes, and the table behind the
Results page's NDCG-vs-time scatter (``ltr findings``' cost ranking, ``ltr export`` and ``ltr runs`` read it too).

The one cost convention (:data:`MINUTES_CONVENTION`, named wherever minutes are shown): a run is charged its
training loop, and a loss's one-time pre-training (NeuralLoss's surrogate, cached by its key and loaded by every
later run with the same key) is a cost of the grid, not of each run: each completed run of the grid (experiment)
that used that surrogate is charged an equal share, so the shares add up to what the grid paid. Only
:func:`pretraining_shares` computes it."""
from __future__ import annotations

import pandas as pd

from ltr.losses import LOSS_NAMES
from ltr.store import RunStore, latest_per_loss_and_fold

MINUTES_CONVENTION = ("minutes per run = its training loop (wall time, warm-up untimed) + an equal share of "
                      "NeuralLoss's one-time surrogate pre-training: that one-time cost / the completed runs of the "
                      "same grid (experiment) that used the surrogate")
# the axis title of every NDCG-vs-time scatter (the Results page's and the export's)
MINUTES_AXIS_TITLE = ("training time per run (minutes: the training loop only, warm-up untimed, "
                      "+ a per-run share of NeuralLoss's one-time pre-training)")
# the columns pretraining_shares adds to a run (0 / NaN / None for a run without pre-training)
SHARE_COLUMNS = ("pretrain_group", "pretrain_once_seconds", "pretrain_shared_by", "pretrain_share_seconds")


def pretraining_key(pretrain_key, config: dict | None) -> str | None:
    """The key of the one-time pre-training a run used: the stored column, else (a run stored before the column)
    the surrogate its config's loss provenance names; None when neither says (its cost is then its own)."""
    if isinstance(pretrain_key, str) and pretrain_key:
        return pretrain_key
    provenance = (config or {}).get("loss_provenance") or {}
    surrogate = provenance.get("surrogate") if isinstance(provenance, dict) else None
    return surrogate if isinstance(surrogate, str) and surrogate else None


def pretraining_shares(pretrained: pd.DataFrame) -> pd.DataFrame:
    """Each pre-trained run's share of its one-time pre-training, indexed by ``run_id``.

    ``pretrained``: completed runs with ``run_id, experiment, pretrain_seconds, pretrain_paid, pretrain_key,
    config`` (:meth:`ltr.store.RunStore.pretraining_runs`). Runs share a pre-training when they have the same
    experiment and key (:func:`pretraining_key`); a run whose key is unknown (stored before keys) is a group
    of its own, so it is charged the whole cost, as before. A group's one-time cost is what its runs that built
    the surrogate spent (two runs that built it at once both paid), or, when every run loaded it from the cache
    (or it is not recorded), the recorded pre-training once. Columns :data:`SHARE_COLUMNS`: the group, its
    one-time seconds, its number of runs and the share = one-time / runs."""
    if pretrained.empty:
        return pd.DataFrame(columns=list(SHARE_COLUMNS), index=pd.Index([], name="run_id"))
    frame = pretrained[["run_id", "experiment", "pretrain_seconds", "pretrain_paid"]].copy()
    keys = [pretraining_key(k, c) for k, c in zip(pretrained["pretrain_key"], pretrained["config"])]
    frame["pretrain_group"] = [f"{e if isinstance(e, str) else ''}/{k}" if k is not None else f"run/{r}"
                               for e, k, r in zip(frame["experiment"], keys, frame["run_id"])]
    frame["pretrain_seconds"] = frame["pretrain_seconds"].astype(float)
    paid = frame["pretrain_paid"].map(lambda v: v is not None and not pd.isna(v) and bool(v))
    groups = frame.groupby("pretrain_group")
    once = (frame["pretrain_seconds"].where(paid).groupby(frame["pretrain_group"]).sum(min_count=1)
            .fillna(groups["pretrain_seconds"].max()))
    frame["pretrain_once_seconds"] = frame["pretrain_group"].map(once)
    frame["pretrain_shared_by"] = frame["pretrain_group"].map(groups.size()).astype(int)
    frame["pretrain_share_seconds"] = frame["pretrain_once_seconds"] / frame["pretrain_shared_by"]
    return frame.set_index("run_id")[list(SHARE_COLUMNS)]


def with_minutes(runs: pd.DataFrame, shares: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with :data:`SHARE_COLUMNS` (from ``shares``, :func:`pretraining_shares`) and ``minutes`` =
    (training loop + pre-training share) / 60 (:data:`MINUTES_CONVENTION`); a run that is not completed has no
    share yet."""
    runs = runs.copy()
    mine = shares.reindex(runs["run_id"])
    for column in SHARE_COLUMNS:
        runs[column] = mine[column].to_numpy()
    runs["pretrain_shared_by"] = runs["pretrain_shared_by"].astype("Int64")  # a count, empty without pre-training
    runs["minutes"] = (runs["train_seconds"].astype(float).fillna(0.0)
                       + runs["pretrain_share_seconds"].astype(float).fillna(0.0)) / 60.0
    return runs


def completed_runs(store: RunStore, data: str, model: str, experiment: str | None = None) -> pd.DataFrame:
    """Completed runs of a data set and ranker with ``minutes`` (:data:`MINUTES_CONVENTION`: training loop +
    the run's share of a one-time pre-training, :func:`with_minutes`), ``cpu_minutes`` = the training loop's
    CPU time / 60, and their ``configuration`` and ``variant`` labels (:func:`ltr.report.runs.completed_runs`;
    ``experiment``: only that grid's runs)."""
    from ltr.report.runs import completed_runs as labelled_runs

    runs = with_minutes(labelled_runs(store, data, model, experiment=experiment),
                        pretraining_shares(store.pretraining_runs()))
    runs["cpu_minutes"] = runs["cpu_seconds"].astype(float) / 60.0
    return runs


def pretraining_summary(runs: pd.DataFrame, by: str = "loss") -> pd.DataFrame:
    """Per ``by`` value of ``runs`` (with :data:`SHARE_COLUMNS`): ``pretrain_once_minutes``, the one-time
    pre-training its runs shared (each group once; several groups add up), and ``pretrain_shared_by``, the runs
    of those groups (the grid's, not only these). NaN / 0 for a loss without pre-training."""
    if runs.empty or "pretrain_group" not in runs:
        return pd.DataFrame(columns=["pretrain_once_minutes", "pretrain_shared_by"], index=pd.Index([], name=by))
    groups = runs.dropna(subset=["pretrain_group"]).drop_duplicates([by, "pretrain_group"])
    out = groups.groupby(by).agg(pretrain_once_minutes=("pretrain_once_seconds", "sum"),
                                 pretrain_shared_by=("pretrain_shared_by", "sum"))
    out["pretrain_once_minutes"] = out["pretrain_once_minutes"].astype(float) / 60.0
    return out.reindex(sorted(set(runs[by]))).fillna({"pretrain_shared_by": 0}).astype({"pretrain_shared_by": int})


def one_run_per_fold_and_seed(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per ``(loss, fold, seed)``: the latest finished (a configuration holds each once; a store
    written by hand may repeat one). Seeds are runs of their own: a fold trained with 3 seeds has 3."""
    if "seed" not in runs:
        return latest_per_loss_and_fold(runs)
    return runs.sort_values("finished").drop_duplicates(["loss", "fold", "seed"], keep="last")


def cost_effectiveness(runs: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Per loss: mean, standard deviation, min and max over its runs (folds x seeds) of test NDCG@k and of
    training minutes (:data:`MINUTES_CONVENTION`), and the one-time pre-training its minutes share
    (:func:`pretraining_summary`: ``pretrain_once_minutes``, ``pretrain_shared_by``; NaN / 0 without).

    One row per loss in the study's order; the standard deviation is the sample one (0 for one run).
    """
    column = f"test_ndcg{k}"
    if runs.empty:
        return pd.DataFrame(columns=["loss", "folds", "ndcg_mean", "ndcg_std", "ndcg_min", "ndcg_max", "minutes_mean",
                                     "minutes_std", "minutes_min", "minutes_max", "pretrain_once_minutes",
                                     "pretrain_shared_by"])
    latest = one_run_per_fold_and_seed(runs)
    agg = latest.groupby("loss").agg(folds=("fold", "nunique"), ndcg_mean=(column, "mean"),
                                     ndcg_std=(column, "std"), ndcg_min=(column, "min"), ndcg_max=(column, "max"),
                                     minutes_mean=("minutes", "mean"), minutes_std=("minutes", "std"),
                                     minutes_min=("minutes", "min"), minutes_max=("minutes", "max"),
                                     ).fillna({"ndcg_std": 0.0, "minutes_std": 0.0})
    agg = agg.join(pretraining_summary(latest)).fillna({"pretrain_shared_by": 0}).astype({"pretrain_shared_by": int})
    order = {name: i for i, name in enumerate(LOSS_NAMES)}
    return agg.reset_index().sort_values("loss", key=lambda s: s.map(lambda n: order.get(n, len(order))),
                                         ignore_index=True)


def in_configuration(runs: pd.DataFrame, configuration: str | None = None) -> pd.DataFrame:
    """The runs of one configuration (default: the significance table's, :func:`ltr.report.runs.select_configuration`),
    one per (loss variant, fold), ``loss`` holding the variant label (``loss_name`` the loss)."""
    from ltr.report.runs import select_configuration

    chosen, _label, _others = select_configuration(runs, configuration)
    return chosen.assign(loss_name=chosen["loss"], loss=chosen["variant"])
