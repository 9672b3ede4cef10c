"""The study's paired test: for one configuration's runs (:func:`ltr.report.runs.select_configuration`), every
loss's mean test NDCG@k over the folds and seeds (the mean over folds of each fold's mean over seeds), the
seed-to-seed spread (the standard deviation over seeds of the mean each seed alone gives), and for every baseline a
paired t-test (two-sided; ``scipy.stats.ttest_rel``'s statistic and p-value, see :func:`paired_t_test`) of the
candidate loss (LearnDCG by default) against it. Queries are the paired units: each query is in exactly one fold's
test set, so the test sets are pooled, a query's NDCG is first averaged over the seeds (seeds are repeated
measurements of one query, not more queries: pooling them would count each query once per seed and shrink the
p-values), and query ``(fold, qid)`` of the candidate is paired with the same query of the baseline. Optionally the
p-values of one k are Holm-corrected across the baselines (family = the baselines compared with the candidate).
Averaging the seeds treats training randomness as fixed: :mod:`ltr.report.seeds` gives the tests that do not.
"""
from __future__ import annotations

import json
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import special

from core.multiple_testing import holm_adjust
from ltr.losses import LOSS_NAMES
from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.report.runs import CANDIDATE, ReportError, completed_runs, loss_order, named_candidate, select_configuration
from ltr.store import RunStore, canonical_data, ndcg_per_query

ALPHA = 0.05


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
    runs, configuration, others = configuration_runs(store, data, model, experiment=experiment, seed=seed,
                                                     configuration=configuration, losses=losses)
    return paired_table(store, runs, data=data, model=model, candidate=named_candidate(runs, candidate),
                        configuration=configuration, others=others, ks=ks, holm=holm, alpha=alpha,
                        exclude_no_relevant=exclude_no_relevant, losses=losses)


def configuration_runs(store: RunStore, data: str, model: str, *, experiment: str | None = None,
                       seed: int | None = None, configuration: str | None = None,
                       losses: Sequence[str] | None = None) -> tuple[pd.DataFrame, str, list[str]]:
    """``(runs, configuration, other configurations)``: the runs :func:`significance_table` compares (one
    configuration's, :func:`ltr.report.runs.select_configuration`; ``losses`` keeps those losses or variants)."""
    data = canonical_data(data)
    runs = completed_runs(store, data, model, experiment=experiment, seed=seed)
    if losses is not None:
        runs = runs[runs["loss"].isin(list(losses)) | runs["variant"].isin(list(losses))]
    if runs.empty:
        raise ReportError(f"no completed runs for data {data!r} and model {model!r}"
                          + (f" in experiment {experiment!r}" if experiment else ""))
    return select_configuration(runs, configuration)


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
    frame = per_query_frame(store, runs, ks)
    per_query = {k: seed_averaged(frame, k) for k in ks}
    n_queries = frame.groupby("variant")[["fold", "qid"]].apply(lambda g: len(g.drop_duplicates()))
    kept = {k: ~per_query[k].index.isin(list(excluded)) for k in ks}  # the queries the t-tests may use

    all_folds, all_seeds = set(runs["fold"]), set(runs["seed"])
    rows, missing, missing_seeds = [], {}, {}
    for variant in loss_order(runs["variant"].unique()):
        mine = runs[runs["variant"] == variant]
        if set(mine["fold"]) != all_folds:
            missing[variant] = sorted(all_folds - set(mine["fold"]))
        lacking = {int(f): sorted(int(s) for s in all_seeds - set(g["seed"])) for f, g in mine.groupby("fold")
                   if set(g["seed"]) != all_seeds}
        if lacking:
            missing_seeds[variant] = lacking
        row = {"data": data, "model": model, "loss": variant, "folds": int(mine["fold"].nunique()),
               "queries": int(n_queries.get(variant, 0)), "seeds": int(mine["seed"].nunique()),
               "runs": int(len(mine))}
        if "baseline_settings" in mine and mine["baseline_settings"].notna().any():
            row["baseline_settings"] = mine["baseline_settings"].dropna().iloc[0]
        for k in ks:
            row[f"ndcg@{k}"], row[f"seed_sd@{k}"], row[f"fold_sd@{k}"] = _means_and_spread(
                mine, per_query[k].get(variant), k)
        if variant != candidate and candidate is not None:
            for k in ks:
                row.update({f"{name}@{k}": value for name, value in
                            paired_columns(per_query[k], candidate, variant, kept[k]).items()})
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
        mark_significant(table, baselines, k, holm=holm, alpha=alpha)
        for alias in identical:  # a loss reported under a second name counts once in the family: its twin's p
            twin = table["loss"] == IDENTICAL_AT_DEFAULTS[alias][0]
            for column in (f"p_holm@{k}", f"better@{k}", f"worse@{k}"):
                if column in table:
                    table.loc[table["loss"] == alias, column] = table.loc[twin, column].iloc[0]
    return table


def per_query_frame(store: RunStore, runs: pd.DataFrame, ks: Sequence[int] = NDCG_CUTOFFS) -> pd.DataFrame:
    """Every run's per-query test results, one row per (run, test query): ``run_id, variant, fold, seed, qid,
    ndcg@k...`` and ``n_relevant`` (the query's relevant documents; NaN for runs stored without the count). The
    input of every test of :mod:`ltr.report` and what :mod:`ltr.report.archive` writes."""
    from ltr.ndcg_conventions import N_RELEVANT

    ids = list(runs["run_id"])
    frame = None
    for k in ks:
        pq = ndcg_per_query(store, ids, k).rename(columns={"value": f"ndcg@{k}"})
        frame = pq if frame is None else frame.merge(pq, on=["run_id", "qid"], how="outer")
    counts = store.per_query(ids, N_RELEVANT).rename(columns={"value": "n_relevant"})
    frame = frame.merge(counts, on=["run_id", "qid"], how="left")
    for at, column in enumerate(("variant", "fold", "seed"), start=1):
        values = frame["run_id"].map(dict(zip(runs["run_id"], runs[column])))
        frame.insert(at, column, values if column == "variant" else values.astype(int))
    for k in ks:
        frame[f"ndcg@{k}"] = frame[f"ndcg@{k}"].astype(float)
    return frame


def seed_averaged(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """One column per variant, one row per test query ``(fold, qid)``: the query's NDCG@k averaged over the
    variant's seeds (one run per variant, fold and seed); NaN where a variant has no result for the query."""
    return frame.groupby(["fold", "qid", "variant"])[f"ndcg@{k}"].mean().astype(float).unstack("variant")


def paired_differences(wide: pd.DataFrame, candidate: str, baseline: str, keep: np.ndarray | None = None) -> np.ndarray:
    """Candidate - baseline on the :func:`seed_averaged` queries both have (among ``keep``): the paired units."""
    a, b = wide[candidate].to_numpy(), wide[baseline].to_numpy()
    mask = ~np.isnan(a) & ~np.isnan(b) & (True if keep is None else keep)
    return a[mask] - b[mask]


def paired_columns(wide: pd.DataFrame, candidate: str, baseline: str, keep: np.ndarray | None = None) -> dict:
    """The paired t-test of ``candidate`` against ``baseline`` on :func:`seed_averaged` values: ``pairs`` (queries
    both have, among ``keep``), ``diff`` (mean of candidate - baseline), ``sd_diff`` and ``p`` (two-sided)."""
    d = paired_differences(wide, candidate, baseline, keep)
    return {"pairs": int(d.size), "diff": float(np.mean(d)) if d.size else np.nan,
            "sd_diff": float(np.std(d, ddof=1)) if d.size > 1 else np.nan, "p": _paired_p(d, np.zeros_like(d))}


def mark_significant(table: pd.DataFrame, family: pd.Series, k: int, *, holm: bool, alpha: float) -> None:
    """``p_holm@k`` (when ``holm``: Holm across the rows of ``family``) and ``better@k`` / ``worse@k`` (the
    candidate significantly better / worse at ``alpha``, by the Holm p when asked), in place."""
    p = table[f"p@{k}"]
    if holm:
        table[f"p_holm@{k}"] = np.nan
        table.loc[family, f"p_holm@{k}"] = holm_adjust(p[family].to_numpy())
        p = table[f"p_holm@{k}"]
    significant = (p < alpha).fillna(False)
    table[f"better@{k}"] = significant & (table[f"diff@{k}"] > 0)
    table[f"worse@{k}"] = significant & (table[f"diff@{k}"] < 0)


def recomputed_tests(frame: pd.DataFrame, candidate: str, ks: Sequence[int] = NDCG_CUTOFFS, *,
                         holm: bool = True, alpha: float = ALPHA) -> pd.DataFrame:
    """:func:`paired_table`'s test columns (``loss``, ``pairs@k``, ``diff@k``, ``sd_diff@k``, ``p@k``, ``p_holm@k``,
    ``better@k``, ``worse@k``) for every other variant of a :func:`per_query_frame` (or an archive read by
    :func:`ltr.report.archive.read_archive`): the same test recomputed without the store."""
    variants = [v for v in loss_order(frame["variant"].unique()) if v != candidate]
    table = pd.DataFrame({"loss": variants})
    for k in ks:
        wide = seed_averaged(frame, k)
        columns = [paired_columns(wide, candidate, v) for v in variants]
        for name in ("pairs", "diff", "sd_diff", "p"):
            table[f"{name}@{k}"] = [c[name] for c in columns]
        mark_significant(table, pd.Series(True, index=table.index), k, holm=holm, alpha=alpha)
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
    order = {v: i for i, v in enumerate(loss_order(frame["loss"].unique()))}
    return frame.sort_values(["loss", "fold", "seed"], key=lambda s: s.map(order) if s.name == "loss" else s,
                             ignore_index=True)



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


