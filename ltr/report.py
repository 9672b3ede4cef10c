"""The cross-validation results table with paired significance tests (the study's main table).

For one data set and ranker, every loss's mean test NDCG@k over the folds and seeds (the mean over
folds of each fold's mean over seeds), the seed-to-seed spread (the standard deviation over seeds of
the mean each seed alone gives), and for every baseline a paired t-test (two-sided;
``scipy.stats.ttest_rel``'s statistic and p-value, see :func:`paired_t_test`) of the candidate loss
(LearnDCG by default) against it. Queries are the paired units: each query is in exactly one fold's
test set, so the test sets are pooled, a query's NDCG is first averaged over the seeds (seeds are
repeated measurements of one query, not more queries: pooling them would count each query once per
seed and shrink the p-values), and query ``(fold, qid)`` of the candidate is paired with the same query
of the baseline. Optionally the p-values of one k are Holm-corrected across the baselines (family =
the baselines compared with the candidate). :func:`fold_seed_table` gives the per-fold x seed figures
beside the test.

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
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import special

from core.atomic import atomic_write_text
from core.multiple_testing import holm_adjust  # noqa: F401  (the table's Holm; re-exported for callers)
from ltr.gbdt import GBDT_MODELS, is_gbdt_model
from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.losses import LEARNABLE_LOSSES, LOSS_NAMES
from ltr.store import RunStore, canonical_data, ndcg_per_query

CANDIDATE = "learndcg"
ALPHA = 0.05
# Marks a baseline's value where the candidate is significantly better (resp. worse) than it.
BETTER_MARK, WORSE_MARK = "\u2020", "\u2021"  # dagger, double dagger


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
                           sorted(group.groupby("variant"), key=lambda kv: _loss_rank(kv[0])))
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


def _no_relevant_queries(store: RunStore, runs: pd.DataFrame) -> set:
    """``(fold, qid)`` of test queries without a relevant document (stored per query by the trainer)."""
    from ltr.ndcg_conventions import N_RELEVANT

    counts = store.per_query(list(runs["run_id"]), N_RELEVANT)
    missing = set(runs["run_id"]) - set(counts["run_id"])
    if missing:
        raise ReportError(f"{len(missing)} run(s) were stored without per-query relevant-document counts "
                          f"(trained before they were recorded); cannot exclude queries without relevant "
                          f"documents for them (e.g. {sorted(missing)[0]})")
    fold_of = dict(zip(runs["run_id"], runs["fold"]))
    return {(fold_of[r], q) for r, q, v in zip(counts["run_id"], counts["qid"], counts["value"]) if v == 0}


def significance_table(store: RunStore, data: str, model: str, *, candidate: str = CANDIDATE,
                       losses: Sequence[str] | None = None, ks: Sequence[int] = NDCG_CUTOFFS, holm: bool = False,
                       alpha: float = ALPHA, experiment: str | None = None, seed: int | None = None,
                       configuration: str | None = None, exclude_no_relevant: bool = False) -> pd.DataFrame:
    """One row per loss variant of one configuration: ``data, model, loss, folds, queries, ndcg@k``
    (mean over folds) and, for each baseline, ``diff@k`` (candidate - baseline, pooled query mean over
    the common folds), ``p@k`` (paired t-test), ``p_holm@k`` (when ``holm``), ``better@k`` /
    ``worse@k`` (the candidate is significantly better / worse at level ``alpha``, using the Holm p
    when asked).

    Runs are compared only within one **configuration** (the shared result-defining fields:
    :data:`SETTING_FIELDS`; default: the configuration with the most completed runs). A loss whose own
    parameters differ between runs gives one row per variant (``variant_label``); folds of different
    configurations or variants are never paired. ``table.attrs``: ``configuration``,
    ``other_configurations``, ``missing_folds`` ({loss: folds it lacks that others have}),
    ``metric_names`` ({k: stored name with its convention}), ``excluded_queries`` (with
    ``exclude_no_relevant``: the pooled test queries without a relevant document left out of the
    t-tests; the means stay over all queries), ``identical`` ({loss: note} for losses reported
    under a second name). Raises :class:`ReportError` when nothing is stored.
    """
    if candidate not in LOSS_NAMES:  # a typo would otherwise give a table with no test at all
        raise ReportError(f"unknown candidate loss {candidate!r}; choose from {', '.join(LOSS_NAMES)}")
    data = canonical_data(data)
    runs = completed_runs(store, data, model, experiment=experiment, seed=seed)
    if losses is not None:
        runs = runs[runs["loss"].isin(list(losses)) | runs["variant"].isin(list(losses))]
    if runs.empty:
        raise ReportError(f"no completed runs for data {data!r} and model {model!r}"
                          + (f" in experiment {experiment!r}" if experiment else ""))
    runs, configuration, others = select_configuration(runs, configuration)
    return paired_table(store, runs, data=data, model=model, candidate=_candidate_variant(runs, candidate),
                        configuration=configuration, others=others, ks=ks, holm=holm, alpha=alpha,
                        exclude_no_relevant=exclude_no_relevant, losses=losses)


def paired_table(store: RunStore, runs: pd.DataFrame, *, data: str, model: str, candidate: str | None,
                 configuration: str, others: Sequence[str] = (), ks: Sequence[int] = NDCG_CUTOFFS,
                 holm: bool = False, alpha: float = ALPHA, exclude_no_relevant: bool = False,
                 losses: Sequence[str] | None = None, no_candidate: str = "") -> pd.DataFrame:
    """The table of one configuration's runs (:func:`select_configuration`'s: one run per variant, fold and seed,
    tree baselines included), ``candidate`` the variant tested against every other (None: no test). The one
    seed-averaged paired test of the project: :func:`significance_table` and :mod:`ltr.findings` both read it.

    Beside :func:`significance_table`'s columns: ``pairs@k`` (the paired test queries against the candidate),
    ``sd_diff@k`` (the SD of their differences) and ``baseline_settings`` (a tree baseline's own settings);
    ``attrs``: ``seeds_of`` ({variant: its seeds}), ``baselines`` ({variant: settings}), ``no_candidate``."""
    from ltr.ndcg_conventions import metric_name
    from ltr.losses import IDENTICAL_AT_DEFAULTS

    excluded = _no_relevant_queries(store, runs) if exclude_no_relevant else set()
    # per k: one column per variant, one row per (fold, qid), each value the query's NDCG averaged over
    # the variant's seeds (one run per variant, fold and seed, so unique before the mean); a variant's
    # column is NaN where it has no result for that query
    per_query, n_queries, kept = {}, {}, {}
    fold_of = dict(zip(runs["run_id"], runs["fold"]))
    variant_of = dict(zip(runs["run_id"], runs["variant"]))
    for k in ks:
        pq = ndcg_per_query(store, list(runs["run_id"]), k)
        pq["fold"] = pq["run_id"].map(fold_of)
        pq["variant"] = pq["run_id"].map(variant_of)
        per_query[k] = pq.groupby(["fold", "qid", "variant"])["value"].mean().astype(float).unstack("variant")
        n_queries[k] = pq.groupby("variant")[["fold", "qid"]].apply(lambda g: len(g.drop_duplicates()))
        kept[k] = ~per_query[k].index.isin(list(excluded))  # the queries the t-tests may use

    all_folds, all_seeds = set(runs["fold"]), set(runs["seed"])
    rows, missing, missing_seeds = [], {}, {}
    for variant in _loss_order(runs["variant"].unique()):
        mine = runs[runs["variant"] == variant]
        if set(mine["fold"]) != all_folds:
            missing[variant] = sorted(all_folds - set(mine["fold"]))
        lacking = {int(f): sorted(int(s) for s in all_seeds - set(g["seed"])) for f, g in mine.groupby("fold")
                   if set(g["seed"]) != all_seeds}
        if lacking:
            missing_seeds[variant] = lacking
        row = {"data": data, "model": model, "loss": variant, "folds": int(mine["fold"].nunique()),
               "queries": int(n_queries[ks[0]].get(variant, 0)), "seeds": int(mine["seed"].nunique()),
               "runs": int(len(mine))}
        if "baseline_settings" in mine and mine["baseline_settings"].notna().any():
            row["baseline_settings"] = mine["baseline_settings"].dropna().iloc[0]
        for k in ks:
            row[f"ndcg@{k}"], row[f"seed_sd@{k}"], row[f"fold_sd@{k}"] = _means_and_spread(
                mine, per_query[k].get(variant), k)
        if variant != candidate and candidate is not None:
            for k in ks:
                wide = per_query[k]
                a, b = wide[candidate].to_numpy(), wide[variant].to_numpy()
                keep = kept[k] & ~np.isnan(a) & ~np.isnan(b)
                a, b = a[keep], b[keep]
                row[f"pairs@{k}"] = int(a.size)
                row[f"diff@{k}"] = float(np.mean(a - b)) if a.size else np.nan
                row[f"sd_diff@{k}"] = float(np.std(a - b, ddof=1)) if a.size > 1 else np.nan
                row[f"p@{k}"] = _paired_p(a, b)
        rows.append(row)
    table = pd.DataFrame(rows)
    identical = {}
    for alias, (twin, note) in IDENTICAL_AT_DEFAULTS.items():
        if twin in set(table["loss"]) and alias not in set(table["loss"]) and _asked_for(store, runs, alias, losses):
            twin_row = table[table["loss"] == twin].iloc[0].to_dict()
            rows.insert(int(np.flatnonzero(table["loss"] == twin)[0]) + 1, {**twin_row, "loss": alias})
            identical[alias] = f"{note}: trained once, reported under both names"
    table = pd.DataFrame(rows)
    table.attrs.update(candidate=candidate, alpha=alpha, holm=holm, configuration=configuration,
                       other_configurations=others, missing_folds=missing, identical=identical,
                       metric_names={k: metric_name(k) for k in ks},
                       excluded_queries=len(excluded) if exclude_no_relevant else None,
                       seeds=sorted(int(x) for x in all_seeds), missing_seeds=missing_seeds,
                       fold_seed=_fold_seed_frame(runs, ks), no_candidate=no_candidate,
                       seeds_of={v: sorted(int(s) for s in set(g["seed"])) for v, g in runs.groupby("variant")},
                       baselines=dict(zip(table["loss"], table["baseline_settings"]))
                       if "baseline_settings" in table else {})
    table.attrs["baselines"] = {v: s for v, s in table.attrs["baselines"].items() if isinstance(s, str)}
    baselines = (table["loss"] != candidate) & ~table["loss"].isin(list(identical))
    if candidate is None or not baselines.any():
        return table  # nothing to test: no candidate, or no baseline beside it
    for k in ks:
        p = table[f"p@{k}"]
        if holm:  # the family: distinct baselines (a loss reported under a second name counts once)
            table[f"p_holm@{k}"] = np.nan
            table.loc[baselines, f"p_holm@{k}"] = holm_adjust(p[baselines].to_numpy())
            for alias in identical:
                twin = IDENTICAL_AT_DEFAULTS[alias][0]
                table.loc[table["loss"] == alias, f"p_holm@{k}"] = table.loc[table["loss"] == twin, f"p_holm@{k}"].iloc[0]
            p = table[f"p_holm@{k}"]
        significant = (p < alpha).fillna(False)
        table[f"better@{k}"] = significant & (table[f"diff@{k}"] > 0)
        table[f"worse@{k}"] = significant & (table[f"diff@{k}"] < 0)
    return table


def _means_and_spread(runs: pd.DataFrame, per_query: pd.Series | None, k: int) -> tuple[float, float, float]:
    """``(mean, seed_sd, fold_sd)`` of one variant's test NDCG@k over its runs (one per fold and seed).

    The mean is over folds of each fold's mean over seeds (a fold's run mean is its mean test NDCG@k; runs
    stored without one are averaged from their per-query values). ``seed_sd``: the sample standard deviation,
    over seeds, of the mean over folds each seed alone gives (the seed-to-seed spread of the study's figure;
    NaN with one seed); ``fold_sd``: over folds, of the seed-averaged fold means (NaN with one fold)."""
    column = f"test_ndcg{k}"
    if column in runs and runs[column].notna().all():
        values = runs.assign(value=runs[column].astype(float))
    else:  # older stores: the run's mean from its per-query values, seed-averaged per query already
        if per_query is None:
            return float("nan"), float("nan"), float("nan")
        fold_means = per_query.groupby(level="fold").mean()
        values = runs.assign(value=runs["fold"].map(fold_means).astype(float))
    by_fold = values.groupby("fold")["value"].mean()
    by_seed = values.groupby("seed")["value"].mean()
    return (float(by_fold.mean()), float(by_seed.std(ddof=1)) if len(by_seed) > 1 else float("nan"),
            float(by_fold.std(ddof=1)) if len(by_fold) > 1 else float("nan"))


def _fold_seed_frame(runs: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """``loss, fold, seed, ndcg@k..., best_epoch, run_id``: one row per run of the compared configuration."""
    cols = {"variant": "loss", "fold": "fold", "seed": "seed", **{f"test_ndcg{k}": f"ndcg@{k}" for k in ks},
            "best_epoch": "best_epoch", "run_id": "run_id"}
    present = [c for c in cols if c in runs]
    frame = runs[present].rename(columns=cols)
    order = {v: i for i, v in enumerate(_loss_order(frame["loss"].unique()))}
    return frame.sort_values(["loss", "fold", "seed"], key=lambda s: s.map(order) if s.name == "loss" else s,
                             ignore_index=True)


def fold_seed_table(table: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """The per-fold x seed figures beside the test: test NDCG@k of every run the table compared, one row per
    ``(loss, fold)`` and one column per seed, then the fold's mean over seeds (what the paired test averages)."""
    frame = table.attrs.get("fold_seed")
    if frame is None or frame.empty:
        return pd.DataFrame()
    wide = frame.pivot_table(index=["loss", "fold"], columns="seed", values=f"ndcg@{k}", aggfunc="mean")
    wide.columns = [f"seed {int(s)}" for s in wide.columns]
    wide["mean over seeds"] = wide.mean(axis=1)
    order = {v: i for i, v in enumerate(table["loss"])}
    return wide.reset_index().sort_values(["loss", "fold"], key=lambda s: s.map(order) if s.name == "loss" else s,
                                          ignore_index=True)


def _candidate_variant(runs: pd.DataFrame, candidate: str) -> str | None:
    """The candidate's row: the variant named ``candidate``, or the only variant of that loss."""
    variants = list(dict.fromkeys(runs.loc[runs["loss"] == candidate, "variant"]))
    if candidate in set(runs["variant"]):
        return candidate
    if len(variants) > 1:
        raise ReportError(f"candidate {candidate!r} has several variants in this configuration "
                          f"({', '.join(variants)}): name one")
    return variants[0] if variants else None


def _asked_for(store: RunStore, runs: pd.DataFrame, alias: str, losses: Sequence[str] | None) -> bool:
    """Whether a second-name loss belongs in the table: asked for by ``losses``, or listed by the grid
    (experiment) the runs came from."""
    if losses is not None:
        return alias in losses
    names = set(runs["experiment"].dropna())
    if not names:
        return False
    grids = store.experiments()
    for config in grids.loc[grids["name"].isin(names), "config_json"]:
        if alias in (json.loads(config).get("losses") or []):
            return True
    return False


def paired_t_test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sided paired t-test of ``a`` against ``b``: ``(t, p)`` exactly as ``scipy.stats.ttest_rel``.

        d = a - b,   t = mean(d) / (sd(d) / sqrt(n)),   p = 2 * P(T_{n-1} <= -|t|)

    The tail comes from ``scipy.special.stdtr`` (Student's t CDF, what ttest_rel's distribution
    evaluates) rather than scipy.stats itself: importing scipy.stats takes about a second, 60% of
    the Results page's first render. ``tests/ltr/test_report.py`` checks both values against ttest_rel.
    Differences all equal and non-zero give t = ±inf and p = 0, as ttest_rel does.
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    return float(t), float(2.0 * special.stdtr(n - 1, -np.abs(t)))


def _paired_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value; 1.0 for identical samples (t is undefined, nothing differs)."""
    if a.size < 2:
        return float("nan")
    if np.allclose(a, b, rtol=0, atol=0):
        return 1.0
    return paired_t_test(a, b)[1]


def _loss_rank(label: str) -> tuple:
    order = {name: i for i, name in enumerate(LOSS_NAMES)}
    loss = label.split("(", 1)[0]
    return order.get(loss, len(order)), label


def _loss_order(labels) -> list[str]:
    """Loss variants in the study's loss order (variants of one loss by label)."""
    return sorted(labels, key=_loss_rank)


def display_table(table: pd.DataFrame, ks: Sequence[int] = NDCG_CUTOFFS, digits: int = 4) -> pd.DataFrame:
    """Strings for printing: ``NDCG@k`` per loss, a baseline's value marked with a dagger where the
    candidate is significantly better than it (double dagger: significantly worse)."""
    from ltr.losses import loss_label  # a loss's table label (RMSE: "RMSE (allRank + mean-grade offset)")

    out = pd.DataFrame({"loss": table["loss"].map(loss_label), "folds": table["folds"]})
    for k in ks:
        values = table[f"ndcg@{k}"].map(lambda v: f"{v:.{digits}f}")
        if f"better@{k}" in table:
            marks = np.where(table[f"better@{k}"], BETTER_MARK, np.where(table[f"worse@{k}"], WORSE_MARK, ""))
            values = values + marks
        out[f"NDCG@{k}"] = values
    return out.reset_index(drop=True)


def table_notes(table: pd.DataFrame) -> list[str]:
    """What a reader must know about the table: configuration, conventions, missing folds, exclusions,
    losses reported under two names, other configurations left out."""
    attrs = table.attrs
    notes = [f"configuration: {attrs.get('configuration', '?')} (only runs of this configuration are "
             f"compared; folds are paired only within it)"]
    names = attrs.get("metric_names") or {}
    if names:
        notes.append("metrics: " + ", ".join(names.values()) + " (test, mean over folds; gain=exp: 2^y-1, "
                     "norel=1: a query without relevant documents scores 1)")
    for loss, folds in (attrs.get("missing_folds") or {}).items():
        notes.append(f"{loss} lacks fold(s) {', '.join(map(str, folds))} in this configuration: its mean is over "
                     f"fewer folds and its t-test pairs only the common folds")
    seeds = attrs.get("seeds") or []
    if len(seeds) > 1:
        notes.append(f"seeds {', '.join(map(str, seeds))}: each value is the mean over folds of the fold's mean over "
                     f"seeds; seed sd = the standard deviation over seeds of the mean each seed alone gives; the "
                     f"t-tests pair queries on their NDCG averaged over the seeds")
    for loss, lacking in (attrs.get("missing_seeds") or {}).items():
        where = "; ".join(f"fold {f}: seed(s) {', '.join(map(str, s))}" for f, s in lacking.items())
        notes.append(f"{loss} lacks {where}: those folds average fewer seeds")
    if attrs.get("excluded_queries") is not None:
        notes.append(f"t-tests exclude {attrs['excluded_queries']} pooled test queries without a relevant document "
                     f"(they score 1 under every loss by convention); means include them")
    for loss, note in (attrs.get("identical") or {}).items():
        notes.append(f"{loss}: {note}")
    for loss, settings in (attrs.get("baselines") or {}).items():
        notes.append(f"{loss}: a tree-ranker baseline trained with its own settings ({settings}), not this "
                     f"configuration's; its runs are paired with the candidate by fold, seed and test query and it "
                     f"is one of the baselines of the Holm family")
    others = attrs.get("other_configurations") or []
    if others:
        notes.append(f"{len(others)} other configuration(s) in the store not shown (choose with --configuration): "
                     + "; ".join(others))
    return notes


def format_text(table: pd.DataFrame, ks: Sequence[int] = NDCG_CUTOFFS, *, with_p: bool = True) -> str:
    """A plain-text table (and the p-values) for the terminal."""
    from ltr.data.datasets import display_name

    head = f"{display_name(table['data'].iloc[0])} / {table['model'].iloc[0]}"
    text = [head, display_table(table, ks).to_string(index=False)]
    p_cols = [c for c in table.columns if c.startswith("p@") or c.startswith("p_holm@")]
    if with_p and p_cols:
        pv = table.loc[table[p_cols].notna().any(axis=1), ["loss", *p_cols]]
        text.append(pv.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        text.append(marks_note(table))
    if "seed_sd@10" in table or "seeds" in table:
        text.append("mean over folds x seeds ± seed sd (sd over seeds of each seed's mean), fold sd:\n"
                    + spread_table(table, ks).to_string(index=False))
    per_run = fold_seed_table(table, max(ks))
    if not per_run.empty:
        text.append(f"test NDCG@{max(ks)} per fold x seed:\n"
                    + per_run.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    text += [f"note: {n}" for n in table_notes(table)]
    return "\n".join(text)


def spread_table(table: pd.DataFrame, ks: Sequence[int] = NDCG_CUTOFFS, digits: int = 4) -> pd.DataFrame:
    """Per loss: folds, seeds, runs and, per k, ``mean ± seed sd`` (the seed-to-seed spread of the mean; the
    mean alone where one seed gives no spread) and the fold-to-fold sd of the seed-averaged fold means."""
    from ltr.losses import loss_label  # a loss's table label (RMSE: "RMSE (allRank + mean-grade offset)")

    out = pd.DataFrame({"loss": table["loss"].map(loss_label), "folds": table["folds"]})
    for col in ("seeds", "runs"):
        if col in table:
            out[col] = table[col]
    for k in ks:
        mean, sd = table[f"ndcg@{k}"], table.get(f"seed_sd@{k}", pd.Series(np.nan, index=table.index))
        out[f"NDCG@{k}"] = [f"{m:.{digits}f}" + ("" if np.isnan(s) else f" ± {s:.{digits}f}") for m, s in zip(mean, sd)]
        if f"fold_sd@{k}" in table:
            out[f"fold sd@{k}"] = table[f"fold_sd@{k}"].map(lambda v: "" if np.isnan(v) else f"{v:.{digits}f}")
    return out.reset_index(drop=True)


def fold_seed_records(table: pd.DataFrame) -> dict[str, list[dict]]:
    """``{loss: [{fold, seed, ndcg@k..., best_epoch, run_id}]}``: the runs behind each row (``ltr report --json``)."""
    frame = table.attrs.get("fold_seed")
    if frame is None or frame.empty:
        return {}
    records = json.loads(frame.to_json(orient="records"))
    out: dict[str, list[dict]] = {}
    for record in records:
        out.setdefault(record.pop("loss"), []).append(record)
    for alias in table.attrs.get("identical") or {}:  # a loss reported under a second name has its twin's runs
        from ltr.losses import IDENTICAL_AT_DEFAULTS

        twin = IDENTICAL_AT_DEFAULTS[alias][0]
        for loss in list(out):
            if variant_loss(loss) == twin:
                out[alias] = out[loss]
    return out


def marks_note(table: pd.DataFrame) -> str:
    """What † and ‡ mean in this table (the terminal's table and the LaTeX caption)."""
    return (f"{BETTER_MARK}/{WORSE_MARK}: {table.attrs.get('candidate', CANDIDATE)} significantly "
            f"better/worse than this loss ({test_description(table)})")


def to_csv(table: pd.DataFrame, path: str | Path) -> None:
    """The full table (means, differences, p-values, flags) as CSV, written atomically."""
    atomic_write_text(path, table.to_csv(index=False))


def test_description(table: pd.DataFrame) -> str:
    """The test and correction behind the table's marks, in words (captions, the findings)."""
    holm = "Holm-corrected across the baselines at each k" if table.attrs.get("holm") else "no multiple-comparison correction"
    seeds = table.attrs.get("seeds") or []
    averaged = (f" on each query's NDCG averaged over the {len(seeds)} seeds (the query is the paired unit)"
                if len(seeds) > 1 else "")
    return (f"two-sided paired t-test of {table.attrs.get('candidate', CANDIDATE)} against each loss over the pooled "
            f"test queries of all folds{averaged}, {holm}, alpha = {table.attrs.get('alpha', ALPHA)}")


def table_caption(table: pd.DataFrame) -> str:
    """``data / ranker: test NDCG@k, mean over N folds; <configuration: epochs, lr, batch, slate, patience,
    seed>; test: <test and correction>``: what a reader of the exported table needs to know."""
    from ltr.data.datasets import display_name

    folds = int(table["folds"].max()) if "folds" in table and len(table) else 0
    seeds = len(table.attrs.get("seeds") or [])
    over = f"{folds} folds x {seeds} seeds" if seeds > 1 else f"{folds} folds"
    baselines = "".join(f"; baseline {loss}: {settings}" for loss, settings in
                        (table.attrs.get("baselines") or {}).items())
    return (f"{display_name(table['data'].iloc[0])} / {table['model'].iloc[0]}: test NDCG@k, mean over {over}; "
            f"{table.attrs.get('configuration', '?')}{baselines}; test: {test_description(table)}")


def to_latex(tables: Sequence[pd.DataFrame] | pd.DataFrame, path: str | Path | None = None,
             ks: Sequence[int] = NDCG_CUTOFFS) -> str:
    """A booktabs LaTeX table per (data, model), best mean per column in bold, the caption naming data, ranker,
    configuration (epochs, learning rate, seed, ...), folds, test and correction; written when ``path``."""
    from core.export import latex_text

    if isinstance(tables, pd.DataFrame):
        tables = [tables]
    parts = []
    for table in tables:
        shown = display_table(table, ks)
        shown["loss"] = shown["loss"].map(latex_text)
        for k in ks:
            best = table[f"ndcg@{k}"].max()
            col = f"NDCG@{k}"
            shown[col] = [rf"\textbf{{{s}}}" if v == best else s for s, v in zip(shown[col], table[f"ndcg@{k}"])]
            shown[col] = shown[col].str.replace(BETTER_MARK, r"$^\dagger$").str.replace(WORSE_MARK, r"$^\ddagger$")
        caption = latex_text(f"{table_caption(table)}. {marks_note(table)}.")
        latex = shown.drop(columns="folds").style.hide(axis="index").to_latex(
            hrules=True, caption=caption, column_format="l" + "r" * len(ks), position="t")
        parts.append(latex)
    text = "\n".join(parts)
    if path is not None:
        atomic_write_text(path, text)
    return text
