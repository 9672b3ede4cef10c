"""Which runs one table compares: a **configuration** (the result-defining settings shared by every loss; runs that
differ only in their seed are one), the loss **variants** in it (one row each), and the tree rankers' runs as
baseline rows of every neural ranker's table.

Tree rankers (:mod:`ltr.gbdt`, e.g. LambdaMART) are baselines of every neural ranker's table: their runs have
their own model and settings (rounds, early stopping, LightGBM parameters), so they never share the neural
runs' configuration, yet the reviewer's question is how the neural losses of *this* ranker compare with them.
:func:`completed_runs` adds them as rows labelled ``lambdamart (LightGBM)`` (:func:`tree_baselines`) and
:func:`select_configuration` keeps those of the configuration's folds and seeds, so the one rule that selects
a configuration's runs also pairs them by (data, fold, seed, test query) with the candidate, in the same Holm
family; their settings are named in the notes, the caption and the ``baseline_settings`` column.
"""
from __future__ import annotations

import json
from typing import Sequence

import pandas as pd

from ltr.gbdt import GBDT_MODELS, is_gbdt_model
from ltr.losses import LEARNABLE_LOSSES, LOSS_NAMES
from ltr.store import RunStore, canonical_data

CANDIDATE = "learndcg"


class ReportError(ValueError):
    """The store cannot give the requested table (no runs, ambiguous runs)."""


# Result-defining fields shared by every loss of one comparison (a "configuration"). Per-loss fields
# (loss parameters, and the loss-parameter learning rate of losses that have parameters) make a
# loss's *variant* instead: one row of the table each. The seed is listed for the label, but runs that
# differ only in their seed are one configuration (seeds are a dimension of the study, averaged per query).
SETTING_FIELDS = ("epochs", "lr", "batch_size", "slate_length", "patience", "seed", "model_params")
_SHORT = {"epochs": "epochs", "lr": "lr", "batch_size": "batch", "slate_length": "slate", "patience": "patience",
          "seed": "seed", "model_params": "model"}


def configuration_label(config: dict, seeds: Sequence[int] | None = None) -> str:
    """``lr=0.001 · epochs=50 · batch=64 · slate=all · patience=10 · seed=0`` (+ model parameters).

    ``seeds``: the seeds of the configuration's runs; several are written ``seeds=0,1,2`` in the seed's
    place (one seed keeps ``seed=0``, so a one-seed configuration's label is what it always was)."""
    parts = []
    for field in SETTING_FIELDS:
        value = config.get(field)
        if field == "model_params":
            if value:
                parts.append("model " + json.dumps(value, sort_keys=True))
            continue
        if field == "seed" and seeds is not None and len(set(seeds)) > 1:
            parts.append("seeds=" + ",".join(str(int(s)) for s in sorted(set(seeds))))
            continue
        if field == "slate_length" and value is None and "epochs" in config:
            value = "all"
        parts.append(f"{_SHORT[field]}={'?' if value is None else value}")
    return " · ".join(parts)


def _setting_key(config: dict) -> str:
    """The configuration a run belongs to whatever its seed: its label with the seed left out."""
    return configuration_label({**config, "seed": "*"})


def variant_label(config: dict, per_loss: Sequence[str] = ()) -> str:
    """The loss with its own parameters: ``learndcg``, ``learndcg(loss_lr=0.01)``, ``learndcg_meta(p_d=3)``;
    ``per_loss``: settings the run's grid sets per loss (a tuned grid's ``lr``, ``batch_size``), shown too:
    ``approxndcg(alpha=2.5,batch_size=32,lr=0.004)``."""
    loss = config.get("loss", "?")
    extra = dict(sorted((config.get("loss_params") or {}).items()))
    if loss in LEARNABLE_LOSSES and config.get("loss_lr") not in (None, config.get("lr")):
        extra["loss_lr"] = config["loss_lr"]
    for name in sorted(per_loss):
        extra[name] = config.get(name)
    if not extra:
        return loss
    return f"{loss}(" + ",".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in extra.items()) + ")"


# Settings a grid may set per loss (``[overrides.loss.<name>]``, e.g. ``ltr grid --tuned``): in such a grid's runs
# they make the loss's variant, not the configuration, so the tuned losses are compared in one table.
PER_LOSS_SETTINGS = ("epochs", "lr", "batch_size", "slate_length", "patience")
PER_LOSS = "per loss"


def per_loss_settings(store: RunStore, experiments) -> dict[str, tuple[str, ...]]:
    """``{experiment: settings its grid overrides for some loss}`` (only experiments that override any)."""
    names = {e for e in experiments if isinstance(e, str)}
    if not names:
        return {}
    grids = store.experiments()
    out = {}
    for name, config in zip(grids["name"], grids["config_json"]):
        if name not in names:
            continue
        by_loss = (json.loads(config).get("overrides") or {}).get("loss") or {}
        fields = sorted({f for values in by_loss.values() for f in values} & set(PER_LOSS_SETTINGS))
        if fields:
            out[name] = tuple(fields)
    return out


TUNED_PER_FOLD = "tuned per fold"


def _tuned_per_fold(runs: pd.DataFrame, per_loss: dict) -> pd.DataFrame:
    """A grid tuned on each fold's own validation set (``ltr tune --fold K`` then ``ltr grid --folds K --tuned``
    for every fold, as ``bench/learndcg_mq2008_reproduction.py`` runs it) gives a loss other settings in each fold,
    so each fold would be a variant of its own with no fold to pair. When, in such a grid, every fold of a
    configuration has one variant of a loss, its runs are one variant ``loss(tuned per fold)``; each run's settings
    stay in its stored config."""
    if runs.empty or not per_loss:
        return runs
    tuned = runs[runs["experiment"].isin(list(per_loss))]
    loss = tuned["variant"].map(variant_loss)
    for (_, name), group in tuned.groupby([tuned["configuration"], loss]):
        if group["variant"].nunique() > 1 and group.groupby("fold")["variant"].nunique().max() == 1:
            runs.loc[group.index, "variant"] = f"{name}({TUNED_PER_FOLD})"
    return runs


def variant_loss(label: str) -> str:
    """The loss a variant label names (``learndcg(normalisation=standard)`` -> ``learndcg``; a tree baseline's
    ``lambdamart (LightGBM)`` -> ``lambdamart``)."""
    return label.split("(", 1)[0].strip()


# A tree ranker's row in a neural ranker's table: ``lambdamart (LightGBM)``; with runs of several settings, one
# row per settings, ``lambdamart (LightGBM; rounds=500 · patience=50 · lightgbm {...})``.
TREE_BASELINE = "{model} (LightGBM)"


def tree_settings(config: dict) -> str:
    """A tree baseline's own settings in words: ``rounds=500 · patience=50 · lightgbm {"learning_rate": 0.05}``
    (its most boosting rounds, early-stopping rounds on validation NDCG@10, LightGBM parameters and version)."""
    version = (config.get("lightgbm") or {}).get("version")
    return " · ".join([f"rounds={config.get('epochs', '?')}", f"patience={config.get('patience', '?')}",
                       "lightgbm " + json.dumps(config.get("model_params") or {}, sort_keys=True)
                       + (f" (LightGBM {version})" if version else "")])


def reported_models(models) -> list[str]:
    """The rankers of one data set that get a table of their own: a tree ranker's runs are a baseline row of every
    neural ranker's table (:func:`tree_baselines`), so it has one only where no neural ranker ran."""
    models = sorted(set(models))
    neural = [m for m in models if not is_gbdt_model(m)]
    return neural or models


def tree_baselines(store: RunStore, data: str, model: str, *, experiment: str | None = None,
                   seed: int | None = None) -> pd.DataFrame:
    """Completed runs of the tree rankers on ``data`` (same experiment, same seed filter) as baseline rows of
    ``model``'s table: ``variant`` ``lambdamart (LightGBM)`` (settings named when its runs have several),
    ``configuration`` the tree's own label, ``baseline`` True, ``baseline_settings`` (:func:`tree_settings`).
    Empty for a tree ranker's own table."""
    if is_gbdt_model(model):
        return pd.DataFrame()
    frames = []
    for tree in GBDT_MODELS:
        runs = store.list_runs(data=canonical_data(data), model=tree, status="completed", experiment=experiment,
                               with_config=True)
        if seed is not None:
            runs = runs[runs["seed"] == seed]
        if runs.empty:
            continue
        runs = runs.copy()
        settings = [tree_settings(c) for c in runs["config"]]
        several = len(set(settings)) > 1
        label = TREE_BASELINE.format(model=tree)
        runs["baseline_settings"] = settings
        runs["variant"] = [f"{label[:-1]}; {s})" if several else label for s in settings]
        runs["configuration"] = [f"{tree}: {s}" for s in settings]
        # tuned on each fold's validation set (the MQ2008 reproduction, issue 41): one settings per fold, one row
        if several and experiment is not None and pd.Series(settings, index=runs.index).groupby(
                runs["fold"]).nunique().max() == 1:
            runs["variant"] = f"{label[:-1]}; {TUNED_PER_FOLD})"
            runs["configuration"] = f"{tree}: {TUNED_PER_FOLD}"
        runs["baseline"] = True
        frames.append(runs)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def completed_runs(store: RunStore, data: str, model: str, *, experiment: str | None = None,
                   seed: int | None = None) -> pd.DataFrame:
    """Completed runs of ``data``/``model`` with their ``configuration`` and ``variant`` labels.

    Runs that differ only in their seed share a configuration, labelled with its seeds
    (:func:`configuration_label`); ``seed`` keeps only that seed's runs. The runs of a grid that sets some
    settings per loss (:func:`per_loss_settings`: a tuned grid) share a configuration whatever those settings
    (``lr=per loss``) and carry them in their variant."""
    runs = store.list_runs(data=canonical_data(data), model=model, status="completed", experiment=experiment,
                           with_config=True)
    if seed is not None:
        runs = runs[runs["seed"] == seed]
    runs = runs.copy()
    per_loss = per_loss_settings(store, set(runs["experiment"].dropna())) if len(runs) else {}
    fields = [per_loss.get(e, ()) if isinstance(e, str) else () for e in runs["experiment"]]
    shared = [{**c, **{f: PER_LOSS for f in own}} for c, own in zip(runs["config"], fields)]
    setting = pd.Series([_setting_key(c) for c in shared], index=runs.index, dtype=object)
    seeds_of = runs.groupby(setting)["seed"].agg(lambda s: sorted(set(int(x) for x in s))) if len(runs) else {}
    runs["configuration"] = [configuration_label(c, seeds_of[key]) for c, key in zip(shared, setting)]
    runs["variant"] = [variant_label(c, own) for c, own in zip(runs["config"], fields)]
    runs = _tuned_per_fold(runs, per_loss)
    runs["baseline"] = False
    trees = tree_baselines(store, data, model, experiment=experiment, seed=seed) if len(runs) else pd.DataFrame()
    if trees.empty:
        return runs
    return pd.concat([runs, trees], ignore_index=True)


def _own(runs: pd.DataFrame) -> pd.Series:
    """The runs of the table's own ranker (not tree baselines)."""
    if "baseline" not in runs:
        return pd.Series(True, index=runs.index)
    return ~runs["baseline"].fillna(False).astype(bool)


def _baselines_of(runs: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """The tree-baseline runs of ``runs`` on the folds and seeds ``chosen`` (one configuration's own runs) has:
    the runs its paired test can pair by (fold, seed, test query)."""
    trees = runs[~_own(runs)]
    if trees.empty or chosen.empty:
        return trees.iloc[:0]
    cells = set(zip(chosen["fold"].astype(int), chosen["seed"].astype(int)))
    return trees[[(int(f), int(s)) in cells for f, s in zip(trees["fold"], trees["seed"])]]


def _with_baselines(runs: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """``chosen`` (one configuration's own runs) and the tree baselines' runs on its folds and seeds."""
    trees = _baselines_of(runs, chosen)
    return pd.concat([chosen, trees]) if len(trees) else chosen


def configurations(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration of ``completed_runs``: label, runs, the variants with their folds, last
    finished; the default first (most runs, then most recently finished)."""
    cols = ["configuration", "runs", "losses", "finished"]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for label, group in runs[_own(runs)].groupby("configuration"):
        group = _with_baselines(runs, group)  # tree baselines are listed, not counted
        losses = ", ".join(f"{v} ({_folds_and_seeds(g)})" for v, g in
                           sorted(group.groupby("variant"), key=lambda kv: loss_rank(kv[0])))
        rows.append({"configuration": label, "runs": int(_own(group).sum()), "losses": losses,
                     "finished": float(group["finished"].max())})
    return pd.DataFrame(rows, columns=cols).sort_values(["runs", "finished"], ascending=False, ignore_index=True)


def _folds_and_seeds(runs: pd.DataFrame) -> str:
    """``5 folds`` (one seed), ``5 folds x 3 seeds``."""
    seeds = runs["seed"].nunique()
    return f"{runs['fold'].nunique()} folds" + (f" x {seeds} seeds" if seeds > 1 else "")


def select_configuration(runs: pd.DataFrame, configuration: str | None) -> tuple[pd.DataFrame, str, list[str]]:
    """The runs of one configuration (default: the first of :func:`configurations`), its label and the
    other labels. Raises :class:`ReportError` for an unknown label.

    The one rule for a configuration's runs: its own runs, plus the tree baselines' runs (:func:`tree_baselines`)
    on the folds and seeds it has, which its paired test pairs by (fold, seed, test query)."""
    table = configurations(runs)
    labels = list(table["configuration"])
    if not labels:
        raise ReportError("no completed runs of this ranker to compare (only tree-baseline runs)")
    if configuration is None:
        configuration = labels[0]
    elif configuration not in labels:
        raise ReportError(f"no completed runs in configuration {configuration!r}; stored: "
                          + "; ".join(repr(x) for x in labels))
    chosen = _with_baselines(runs, runs[_own(runs) & (runs["configuration"] == configuration)])
    # one run per (variant, fold, seed): equal configs share a run id, so only stores written by hand repeat one
    chosen = chosen.sort_values("finished").drop_duplicates(["variant", "fold", "seed"], keep="last")
    return chosen, configuration, [x for x in labels if x != configuration]



def named_candidate(runs: pd.DataFrame, candidate: str) -> str | None:
    """The candidate's row: the variant named ``candidate``, or the only variant of that loss."""
    variants = list(dict.fromkeys(runs.loc[runs["loss"] == candidate, "variant"]))
    if candidate in set(runs["variant"]):
        return candidate
    if len(variants) > 1:
        raise ReportError(f"candidate {candidate!r} has several variants in this configuration "
                          f"({', '.join(variants)}): name one")
    return variants[0] if variants else None



def loss_rank(label: str) -> tuple:
    order = {name: i for i, name in enumerate(LOSS_NAMES)}
    loss = label.split("(", 1)[0]
    return order.get(loss, len(order)), label


def loss_order(labels) -> list[str]:
    """Loss variants in the study's loss order (variants of one loss by label)."""
    return sorted(labels, key=loss_rank)

