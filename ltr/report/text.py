"""The significance table (:mod:`ltr.report.paired`) for a reader: printed, as CSV and LaTeX, with its caption,
marks and notes."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from core.atomic import atomic_write_text
from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.report.paired import ALPHA
from ltr.report.runs import CANDIDATE, variant_loss

# Marks a baseline's value where the candidate is significantly better (resp. worse) than it.
BETTER_MARK, WORSE_MARK = "\u2020", "\u2021"  # dagger, double dagger


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
    """A LaTeX table per (data, model) through the exports' one table writer (``core.export.booktabs``: never
    scaled, ``\\footnotesize``, split or set sideways when wide), the caption naming data, ranker,
    configuration (epochs, learning rate, seed, ...), folds, test and correction, the notes what the marks
    mean and which loss has the highest mean at each k; written when ``path``."""
    from core.export import booktabs, slug

    if isinstance(tables, pd.DataFrame):
        tables = [tables]
    parts = []
    for table in tables:
        shown = display_table(table, ks).drop(columns="folds")
        best = "; ".join(f"NDCG@{k} {', '.join(shown['loss'][table[f'ndcg@{k}'].to_numpy() == table[f'ndcg@{k}'].max()])}"
                         for k in ks)
        label = f"tab:significance-{slug(table['data'].iloc[0])}-{slug(table['model'].iloc[0])}"
        parts.append(booktabs(shown, table_caption(table), label=label,
                              notes=[f"{marks_note(table)}.", f"Highest mean: {best}."]))
    text = "\n".join(parts)
    if path is not None:
        atomic_write_text(path, text)
    return text
