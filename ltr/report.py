"""The cross-validation results table with paired significance tests (the study's main table).

For one data set and ranker, every loss's mean test NDCG@k over the folds (the mean of the fold
means), and for every baseline a paired t-test (``scipy.stats.ttest_rel``, two-sided) of the
candidate loss (LearnDCG by default) against it. Queries are the paired units: each query is in
exactly one fold's test set, so the five test sets are pooled and query ``(fold, qid)`` of the
candidate is paired with the same query of the baseline. Optionally the p-values of one k are
Holm-corrected across the baselines (family = the baselines compared with the candidate).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from core.atomic import atomic_write_text
from ltr.cutoffs import NDCG_CUTOFFS
from ltr.store import RunStore, canonical_data, latest_per_loss_and_fold

CANDIDATE = "learndcg"
ALPHA = 0.05
# Marks a baseline's value where the candidate is significantly better (resp. worse) than it.
BETTER_MARK, WORSE_MARK = "\u2020", "\u2021"  # dagger, double dagger


class ReportError(ValueError):
    """The store cannot give the requested table (no runs, ambiguous runs)."""


def holm_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaN entries are left out of the family and stay NaN).

    Sorted ascending p_(1) <= ... <= p_(m): adj_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)).
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        order = ok[np.argsort(p[ok], kind="stable")]
        m = order.size
        adjusted = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(adjusted)
    return out


def _completed_runs(store: RunStore, data: str, model: str, experiment: str | None,
                    seed: int | None) -> tuple[pd.DataFrame, int]:
    """Completed runs, one per (loss, fold): the latest finished where several exist (as the
    dashboard's fold table does); also returns how many older runs were left out."""
    runs = store.list_runs(data=data, model=model, status="completed", experiment=experiment)
    if seed is not None:
        runs = runs[runs["seed"] == seed]
    latest = latest_per_loss_and_fold(runs)
    return latest, len(runs) - len(latest)


def significance_table(store: RunStore, data: str, model: str, *, candidate: str = CANDIDATE,
                       losses: Sequence[str] | None = None, ks: Sequence[int] = NDCG_CUTOFFS, holm: bool = False,
                       alpha: float = ALPHA, experiment: str | None = None, seed: int | None = None) -> pd.DataFrame:
    """One row per loss: ``data, model, loss, folds, queries, ndcg@k`` (mean over folds) and, for
    each baseline, ``diff@k`` (candidate - baseline, pooled query mean over the common folds),
    ``p@k`` (paired t-test), ``p_holm@k`` (when ``holm``), ``better@k`` / ``worse@k``
    (the candidate is significantly better / worse at level ``alpha``, using the Holm p when asked).

    ``data`` is the name (or folder) as stored by the trainer; rows follow the study's loss order.
    Where a (loss, fold) has several completed runs (other hyper-parameters or seeds), the latest
    finished one is used (``table.attrs["left_out"]`` counts the others; pick a set with
    ``experiment``/``seed``). Raises :class:`ReportError` when nothing is stored.
    """
    from ltr.losses import LOSS_NAMES

    if candidate not in LOSS_NAMES:  # a typo would otherwise give a table with no test at all
        raise ReportError(f"unknown candidate loss {candidate!r}; choose from {', '.join(LOSS_NAMES)}")
    data = canonical_data(data)
    runs, left_out = _completed_runs(store, data, model, experiment, seed)
    if losses is not None:
        runs = runs[runs["loss"].isin(list(losses))]
    if runs.empty:
        raise ReportError(f"no completed runs for data {data!r} and model {model!r}"
                          + (f" in experiment {experiment!r}" if experiment else ""))
    per_query = {}  # (loss, k) -> Series indexed by (fold, qid)
    fold_of = dict(zip(runs["run_id"], runs["fold"]))
    for k in ks:
        pq = store.per_query(list(runs["run_id"]), f"ndcg@{k}")
        pq["fold"] = pq["run_id"].map(fold_of)
        pq["loss"] = pq["run_id"].map(dict(zip(runs["run_id"], runs["loss"])))
        for loss, group in pq.groupby("loss"):
            per_query[loss, k] = group.set_index(["fold", "qid"])["value"].astype(float)

    rows = []
    for loss in _loss_order(runs["loss"].unique()):
        mine = runs[runs["loss"] == loss]
        row = {"data": data, "model": model, "loss": loss, "folds": int(mine["fold"].nunique()),
               "queries": int(len(per_query.get((loss, ks[0]), ())))}
        for k in ks:
            row[f"ndcg@{k}"] = float(mine[f"test_ndcg{k}"].mean()) if f"test_ndcg{k}" in mine else \
                float(per_query[loss, k].groupby(level="fold").mean().mean())
        if loss != candidate and candidate in set(runs["loss"]):
            for k in ks:
                a, b = per_query[candidate, k].align(per_query[loss, k], join="inner")
                keep = a.notna() & b.notna()
                a, b = a[keep].to_numpy(), b[keep].to_numpy()
                row[f"diff@{k}"] = float(np.mean(a - b)) if a.size else np.nan
                row[f"p@{k}"] = _paired_p(a, b)
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs.update(candidate=candidate, alpha=alpha, holm=holm, left_out=left_out)
    baselines = table["loss"] != candidate
    if candidate not in set(table["loss"]) or not baselines.any():
        return table  # nothing to test: no candidate, or no baseline beside it
    for k in ks:
        p = table[f"p@{k}"]
        if holm:
            table[f"p_holm@{k}"] = np.nan
            table.loc[baselines, f"p_holm@{k}"] = holm_adjust(p[baselines].to_numpy())
            p = table[f"p_holm@{k}"]
        significant = (p < alpha).fillna(False)
        table[f"better@{k}"] = significant & (table[f"diff@{k}"] > 0)
        table[f"worse@{k}"] = significant & (table[f"diff@{k}"] < 0)
    return table


def _paired_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value; 1.0 for identical samples (t is undefined, nothing differs)."""
    if a.size < 2:
        return float("nan")
    if np.allclose(a, b, rtol=0, atol=0):
        return 1.0
    return float(stats.ttest_rel(a, b).pvalue)


def _loss_order(losses) -> list[str]:
    from ltr.losses import LOSS_NAMES

    order = {name: i for i, name in enumerate(LOSS_NAMES)}
    return sorted(losses, key=lambda name: (order.get(name, len(order)), name))


def display_table(table: pd.DataFrame, ks: Sequence[int] = NDCG_CUTOFFS, digits: int = 4) -> pd.DataFrame:
    """Strings for printing: ``NDCG@k`` per loss, a baseline's value marked with a dagger where the
    candidate is significantly better than it (double dagger: significantly worse)."""
    out = pd.DataFrame({"loss": table["loss"], "folds": table["folds"]})
    for k in ks:
        values = table[f"ndcg@{k}"].map(lambda v: f"{v:.{digits}f}")
        if f"better@{k}" in table:
            marks = np.where(table[f"better@{k}"], BETTER_MARK, np.where(table[f"worse@{k}"], WORSE_MARK, ""))
            values = values + marks
        out[f"NDCG@{k}"] = values
    return out.reset_index(drop=True)


def format_text(table: pd.DataFrame, ks: Sequence[int] = NDCG_CUTOFFS, *, with_p: bool = True) -> str:
    """A plain-text table (and the p-values) for the terminal."""
    head = f"{table['data'].iloc[0]} / {table['model'].iloc[0]}"
    text = [head, display_table(table, ks).to_string(index=False)]
    p_cols = [c for c in table.columns if c.startswith("p@") or c.startswith("p_holm@")]
    if with_p and p_cols:
        pv = table.loc[table[p_cols].notna().any(axis=1), ["loss", *p_cols]]
        text.append(pv.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        text.append(f"{BETTER_MARK}/{WORSE_MARK}: {table.attrs.get('candidate', CANDIDATE)} significantly "
                    f"better/worse than this loss (paired t-test over pooled test queries, "
                    f"{'Holm-corrected ' if table.attrs.get('holm') else ''}p < {table.attrs.get('alpha', ALPHA)})")
    if table.attrs.get("left_out"):
        text.append(f"note: {table.attrs['left_out']} older completed run(s) of the same (loss, fold) left out; "
                    f"the latest is used (select with --experiment / --seed)")
    return "\n".join(text)


def to_csv(table: pd.DataFrame, path: str | Path) -> None:
    """The full table (means, differences, p-values, flags) as CSV, written atomically."""
    atomic_write_text(path, table.to_csv(index=False))


def to_latex(tables: Sequence[pd.DataFrame] | pd.DataFrame, path: str | Path | None = None,
             ks: Sequence[int] = NDCG_CUTOFFS) -> str:
    """A booktabs LaTeX table per (data, model), best mean per column in bold; written when ``path``."""
    if isinstance(tables, pd.DataFrame):
        tables = [tables]
    parts = []
    for table in tables:
        shown = display_table(table, ks)
        shown["loss"] = shown["loss"].str.replace("_", r"\_")
        for k in ks:
            best = table[f"ndcg@{k}"].max()
            col = f"NDCG@{k}"
            shown[col] = [rf"\textbf{{{s}}}" if v == best else s for s, v in zip(shown[col], table[f"ndcg@{k}"])]
            shown[col] = shown[col].str.replace(BETTER_MARK, r"$^\dagger$").str.replace(WORSE_MARK, r"$^\ddagger$")
        caption = f"{table['data'].iloc[0]} / {table['model'].iloc[0]}".replace("_", r"\_")
        latex = shown.drop(columns="folds").style.hide(axis="index").to_latex(
            hrules=True, caption=caption, column_format="l" + "r" * len(ks), position="t")
        parts.append(latex)
    text = "\n".join(parts)
    if path is not None:
        atomic_write_text(path, text)
    return text
