"""Seeds as a random effect, beside the seed-averaged paired t-test of :mod:`ltr.report.paired` (issue 41).

That test averages each query's NDCG over the seeds and pairs queries: it treats the training randomness as fixed,
although the seed-to-seed spread of a loss's mean (0.2–0.4 NDCG points on MQ2008) is about the size of the leads
it tests. Two tests that do not:

- the **fold-level test** (:func:`fold_level_test`): a paired t-test (``scipy.stats.ttest_rel``) over the folds'
  means, each fold's mean the mean over its seeds of the runs' mean test NDCG@k; n = the folds (5), so it sees
  the seeds' and the folds' variation and little power;
- a **hierarchical bootstrap over queries and seeds** (:func:`bootstrap_test`): per (fold, seed, query) the
  difference candidate - baseline of the two runs of that fold and seed; each replicate draws, within every fold,
  its test queries and its seeds with replacement, independently (queries and seeds are crossed: each query is
  scored by every seed's run), and takes the difference's mean over all drawn (query, seed) cells, the folds
  weighted by their queries. The percentile interval and a two-sided p from the replicates' share on either side
  of 0. Resampling both crossed factors counts the residual twice, so the interval errs wide (conservative); with
  3 seeds a fold's seed draw is coarse, so the interval is a rough one. statsmodels' ``MixedLM`` with crossed
  query and run effects is the model-based alternative; on the 2-core machine it took 125–140 s per comparison
  (2,355 differences, load 11), 40 per table, so the bootstrap (a second for a table) is what runs.

:func:`top_group`: the losses not significantly below the best (the highest mean) after Holm across the family
of the best's comparisons; it implies no order within the group.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from core.multiple_testing import holm_adjust
from ltr.report.paired import ALPHA

REPLICATES = 4000
BOOTSTRAP_SEED = 0  # fixed: the same archive gives the same interval and p on every machine
FOLD_TEST = "fold-level paired t-test over the folds' means (each fold's mean over its seeds; n = folds)"
BOOTSTRAP_TEST = (f"hierarchical bootstrap over test queries and seeds ({REPLICATES} replicates, queries and seeds "
                  "drawn with replacement within each fold; percentile interval, two-sided p)")


def run_means(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """``variant, fold, seed, ndcg@k``: each run's mean test NDCG@k from a per-query frame
    (:func:`ltr.report.paired.per_query_frame` or an archive)."""
    return frame.groupby(["variant", "fold", "seed"], as_index=False)[f"ndcg@{k}"].mean()


def table_mean(runs: pd.DataFrame, variant: str, k: int) -> float:
    """The table's figure from run means: the mean over folds of each fold's mean over seeds."""
    mine = runs[runs["variant"] == variant]
    return float(mine.groupby("fold")[f"ndcg@{k}"].mean().mean())


def fold_level_test(runs: pd.DataFrame, candidate: str, baseline: str, k: int) -> dict:
    """``{folds, diff, t, p}``: ``candidate`` against ``baseline`` paired over their common folds (``runs``: one
    row per run, ``variant, fold, seed, ndcg@k``); p NaN with fewer than 2 folds, 1.0 when no fold differs."""
    from scipy import stats

    means = runs.groupby(["variant", "fold"])[f"ndcg@{k}"].mean().unstack("variant")
    pair = means[[candidate, baseline]].dropna()
    a, b = pair[candidate].to_numpy(float), pair[baseline].to_numpy(float)
    out = {"folds": int(a.size), "diff": float(np.mean(a - b)) if a.size else float("nan")}
    if a.size < 2:
        return {**out, "t": float("nan"), "p": float("nan")}
    if np.array_equal(a, b):
        return {**out, "t": 0.0, "p": 1.0}
    result = stats.ttest_rel(a, b)
    return {**out, "t": float(result.statistic), "p": float(result.pvalue)}


def _differences(frame: pd.DataFrame, candidate: str, baseline: str, k: int) -> dict[int, np.ndarray]:
    """Per fold, the matrix (queries x seeds) of candidate - baseline NDCG@k on the seeds and queries both have."""
    column = f"ndcg@{k}"
    wide = (frame[frame["variant"].isin([candidate, baseline])]
            .pivot_table(index=["fold", "qid"], columns=["variant", "seed"], values=column, aggfunc="mean"))
    out = {}
    for fold, rows in wide.groupby(level="fold"):
        if candidate not in rows.columns.get_level_values(0) or baseline not in rows.columns.get_level_values(0):
            continue
        diff = (rows[candidate] - rows[baseline]).dropna(axis=1, how="all").dropna(axis=0, how="any")
        if diff.size:
            out[int(fold)] = diff.to_numpy(float)
    return out


def bootstrap_test(frame: pd.DataFrame, candidate: str, baseline: str, k: int, *, replicates: int = REPLICATES,
                   seed: int = BOOTSTRAP_SEED, level: float = 0.95) -> dict:
    """``{queries, seeds, diff, ci, p, replicates}`` of the hierarchical bootstrap (module docstring); ``diff`` the
    observed mean difference over all (query, seed) cells, the same as the paired test's pooled mean where every
    fold has every seed."""
    cells = _differences(frame, candidate, baseline, k)
    queries = sum(d.shape[0] for d in cells.values())
    if queries < 2:
        return {"queries": queries, "seeds": 0, "diff": float("nan"), "ci": [float("nan")] * 2, "p": float("nan"),
                "replicates": 0}
    rng = np.random.default_rng(seed)
    total = np.zeros(replicates)
    for fold in sorted(cells):
        d = cells[fold]
        n_q, n_s = d.shape
        # counts of each query and seed in each replicate's draw: the drawn cells' sum is w_q' d w_s
        w_q = rng.multinomial(n_q, np.full(n_q, 1 / n_q), size=replicates)
        w_s = rng.multinomial(n_s, np.full(n_s, 1 / n_s), size=replicates)
        total += np.einsum("bq,qs,bs->b", w_q, d, w_s) / n_s  # the fold's sum over queries of the seed mean
    boot = total / queries
    observed = float(sum(d.mean(axis=1).sum() for d in cells.values()) / queries)
    tail = (1 - level) / 2
    below, above = (np.sum(boot <= 0) + 1) / (replicates + 1), (np.sum(boot >= 0) + 1) / (replicates + 1)
    if np.all(boot == 0):
        p = 1.0
    else:
        p = float(min(1.0, 2 * min(below, above)))
    return {"queries": int(queries), "seeds": int(max(d.shape[1] for d in cells.values())), "diff": observed,
            "ci": [float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail))], "p": p,
            "replicates": int(replicates)}


def seed_tests(frame: pd.DataFrame, candidate: str, ks: Sequence[int], *, alpha: float = ALPHA,
               runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per other variant of ``frame`` (a per-query frame; ``runs``: run means instead, for the fold-level test
    alone): ``fold_diff@k, fold_p@k, fold_p_holm@k`` and, with a per-query frame, ``boot_diff@k, boot_low@k,
    boot_high@k, boot_p@k, boot_p_holm@k``; Holm across the variants at each k, as the paired test's family."""
    source = runs if runs is not None else frame
    variants = [v for v in dict.fromkeys(source["variant"]) if v != candidate]
    table = pd.DataFrame({"loss": variants})
    for k in ks:
        means = runs if runs is not None else run_means(frame, k)
        fold = [fold_level_test(means, candidate, v, k) for v in variants]
        table[f"fold_diff@{k}"] = [f["diff"] for f in fold]
        table[f"fold_p@{k}"] = [f["p"] for f in fold]
        table[f"fold_p_holm@{k}"] = holm_adjust(table[f"fold_p@{k}"].to_numpy(float))
        if runs is None:
            boot = [bootstrap_test(frame, candidate, v, k) for v in variants]
            table[f"boot_diff@{k}"] = [b["diff"] for b in boot]
            table[f"boot_low@{k}"] = [b["ci"][0] for b in boot]
            table[f"boot_high@{k}"] = [b["ci"][1] for b in boot]
            table[f"boot_p@{k}"] = [b["p"] for b in boot]
            table[f"boot_p_holm@{k}"] = holm_adjust(table[f"boot_p@{k}"].to_numpy(float))
    table.attrs.update(candidate=candidate, alpha=alpha, fold_test=FOLD_TEST,
                       bootstrap_test=None if runs is not None else BOOTSTRAP_TEST)
    return table


def top_group(means: dict[str, float], p_against_best: Callable[[str, str], float], *, alpha: float = ALPHA) -> dict:
    """``{best, members, p_holm, alpha}``: ``best`` the variant with the highest mean, ``members`` it and every
    variant whose comparison with it (``p_against_best(best, other)``, two-sided) is not significant after Holm
    across the family of the best's comparisons; members in the order of ``means``, which implies no ranking."""
    if not means:
        return {"best": None, "members": [], "p_holm": {}, "alpha": alpha}
    best = max(means, key=lambda v: means[v])
    others = [v for v in means if v != best]
    adjusted = holm_adjust(np.array([p_against_best(best, v) for v in others], dtype=float)) if others else []
    p_holm = {v: float(p) for v, p in zip(others, adjusted)}
    members = [v for v in means if v == best or not p_holm[v] < alpha]
    return {"best": best, "members": members, "p_holm": p_holm, "alpha": alpha}
