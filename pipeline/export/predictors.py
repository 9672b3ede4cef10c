"""The predictor heatmap of a stored prediction (:mod:`pipeline.predict.store`, ``python -m pipeline predict``)
as a paper figure: predictors x targets of Kendall τ-b oriented so that positive = a higher predictor value
goes with an easier query (the Predicting failure page's colour, ``tau_easier``), ``*`` where the
Holm-corrected p < 0.05 across the table; and its table (CSV with every figure; booktabs LaTeX with τ, r and
AUC beside their bootstrap intervals, Holm p of τ and Pearson's p). The caption is short (settings, the
intervals, whether the pre-retrieval statistics come from a partial index); which way the AUC points and
how NQC/WIG/SMV are normalised are in :func:`definitions` (``predictor-definitions.csv`` and the manifest)."""
from __future__ import annotations

import pandas as pd

from core.export import format_number

ALPHA = 0.05
COLUMNS = ("dataset", "predictor", "family", "target", "n", "n_hard", "kendall_tau", "tau_easier", "kendall_p",
           "kendall_p_holm", "pearson_r", "pearson_p", "pearson_p_holm", "auc", "smare", "partial", "pool", "verdict",
           "verdict_reason", "note")
POOL_MARK = " (pool)"  # a value that reads a pool-built index (the caption says what that means)
INTERVALS = {"kendall_tau": "tau", "pearson_r": "r", "auc": "auc", "smare": "smare"}  # stored interval -> column prefix
# how NQC, WIG and SMV are normalised (pipeline.predict.post_retrieval's definitions, stated with the figure)
NORMALISATION = ("NQC@k = sd@k / |score(D, q)|, WIG@k = mean of the top k's scores minus score(D, q), over "
                 "sqrt(|q|), SMV@k over score(D, q): score(D, q) is the corpus score (the collection as one document, "
                 "scored by the run's BM25 from the index's statistics; Shtok et al., Zhou & Croft, Tao & Wu); the "
                 "*_listmean variants divide by the mean score of the query's retrieved list (depth {k}) instead, the "
                 "only option for a run without an index or a known retrieval model")


def newest_prediction(dataset: str) -> dict | None:
    """The newest stored prediction whose datasets include ``dataset`` (None when there is none)."""
    from pipeline.predict import store

    for entry in store.list_results():
        if dataset in (entry.get("datasets") or []):
            return store.load(entry["id"])
    return None


def evaluation_table(prediction: dict, scope: str) -> pd.DataFrame:
    """Every stored figure of ``scope``'s rows, each interval as its low and high (the CSV)."""
    rows = []
    for r in prediction["evaluation"]:
        if r["dataset"] != scope:
            continue
        row = {k: r.get(k) for k in COLUMNS}
        for stored, prefix in INTERVALS.items():
            low, high = (r.get("intervals") or {}).get(stored) or (None, None)
            row[f"{prefix}_low"], row[f"{prefix}_high"] = low, high
        rows.append(row)
    return pd.DataFrame(rows, columns=[*COLUMNS, *(f"{p}_{e}" for p in INTERVALS.values() for e in ("low", "high"))])


def _interval(low, high) -> str:
    return "--" if low is None or pd.isna(low) else f"[{format_number(low, 2)}, {format_number(high, 2)}]"


def latex_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's columns: τ (easier +, ``*`` Holm p < 0.05) with its interval and Holm p, Pearson r with its
    interval and p, AUC with its interval."""
    rows = []
    for r in table.to_dict("records"):
        star = "*" if r["kendall_p_holm"] is not None and not pd.isna(r["kendall_p_holm"]) \
            and r["kendall_p_holm"] < ALPHA else ""
        flip = -1 if r["tau_easier"] is not None and r["kendall_tau"] is not None and not pd.isna(r["kendall_tau"]) \
            and r["tau_easier"] != r["kendall_tau"] else 1  # the interval of the oriented τ
        low, high = sorted((flip * r["tau_low"], flip * r["tau_high"])) if r["tau_low"] is not None \
            and not pd.isna(r["tau_low"]) else (None, None)
        rows.append({"predictor": r["predictor"] + (POOL_MARK if r.get("pool") else ""), "target": r["target"], "n": r["n"],
                     "τ (easier +)": "--" if r["tau_easier"] is None or pd.isna(r["tau_easier"])
                     else f"{format_number(r['tau_easier'], 2)}{star}",
                     "τ 95% CI": _interval(low, high), "p Holm": r["kendall_p_holm"],
                     "r": r["pearson_r"], "r 95% CI": _interval(r["r_low"], r["r_high"]), "p (r)": r["pearson_p"],
                     "AUC": r["auc"], "AUC 95% CI": _interval(r["auc_low"], r["auc_high"])})
    return pd.DataFrame(rows)


def heatmap_figure(table: pd.DataFrame, title: str):
    """The τ heatmap, its title short (the caption says the rest); target labels under the cells, so
    rotated labels never run into the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    predictors = list(dict.fromkeys(table["predictor"]))
    targets = list(dict.fromkeys(table["target"]))
    cell = {(r["predictor"], r["target"]): r for r in table.to_dict("records")}
    z = np.array([[np.nan if pd.isna(cell.get((p, t), {}).get("tau_easier", np.nan)) else cell[(p, t)]["tau_easier"]
                   for t in targets] for p in predictors], dtype=float)
    fig, ax = plt.subplots(figsize=(1.2 * len(targets) + 3.5, 0.35 * len(predictors) + 1.8))
    image = ax.imshow(z, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    for i, p in enumerate(predictors):
        for j, t in enumerate(targets):
            r = cell.get((p, t))
            if r is None or r.get("tau_easier") is None or pd.isna(r["tau_easier"]):
                continue
            star = "*" if r.get("kendall_p_holm") is not None and r["kendall_p_holm"] < ALPHA else ""
            ax.text(j, i, f"{r['tau_easier']:.2f}{star}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(targets)), targets, rotation=30, ha="right", fontsize=8)
    ax.xaxis.set_ticks_position("bottom")
    pooled = {r["predictor"] for r in table.to_dict("records") if r.get("pool")}
    ax.set_yticks(range(len(predictors)), [p + (POOL_MARK if p in pooled else "") for p in predictors], fontsize=8)
    fig.colorbar(image, ax=ax, label="τ (easier +)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def title(prediction: dict, scope: str) -> str:
    return f"{scope.upper()}: Kendall τ of predictor vs failure target"


def caption(prediction: dict, scope: str) -> str:
    """What the figure and table show and what made them, short enough for a float (issue 40: the full
    definitions made an 1,820-character caption that ran off the page): settings, τ's sign and mark, the
    intervals, the index and a pool-built one's caveat; the definitions are in :func:`definitions`
    (``predictor-definitions.csv``, the manifest)."""
    settings = prediction.get("settings") or {}
    parts = [f"{scope.upper()}: against each task's per-query target (prediction {prediction.get('id')})"]
    for key in ("retrievers", "generators", "judges", "setups"):
        if settings.get(key):
            parts.append(f"{key} {', '.join(map(str, settings[key]))}")
    parts.append("τ: Kendall τ-b, positive = a higher predictor value goes with an easier query; * Holm p < 0.05")
    boot = (prediction.get("provenance") or {}).get("bootstrap") or {}
    if boot:
        parts.append(f"{int(round(100 * boot.get('confidence', 0.95)))}% bootstrap intervals, {boot.get('n_boot')} "
                     f"resamples, seed {boot.get('seed')}")  # its method: the definitions' "intervals" term
    parts.append("partial index" if _partial_index(prediction, scope) else "full-corpus index")
    if prediction.get("pool"):  # a caveat on what the figures mean, not a definition: stated with them
        parts.append("(pool): reads an index of these topics' own pools, no 'foresees' verdict")  # in full: "pool" term
    parts.append("definitions: predictor-definitions.csv")
    return "; ".join(parts)


def _partial_index(prediction: dict, scope: str) -> dict | None:
    """The index of ``scope`` when its statistics are partial (None for a full-corpus index)."""
    index = ((prediction.get("provenance") or {}).get("index") or {}).get(scope)
    return (index or {"partial": True}) if prediction.get("partial") or (index or {}).get("partial") else None


def definitions(prediction: dict, scope: str) -> dict[str, str]:
    """What the caption does not hold: each term of the figure and table defined (τ's sign, the AUC's
    direction, the intervals, how NQC/WIG/SMV are normalised, the index, the pool), as
    ``predictor-definitions.csv`` and the manifest state them."""
    from pipeline.predict.ceiling import ceiling_text
    from pipeline.predict.evaluation import AUC_NOTE

    settings = prediction.get("settings") or {}
    out = {"tau": "Kendall τ-b signed so that positive = a higher predictor value goes with an easier query "
                  "(for disagreement, -τ); * Holm-corrected p < 0.05 across the table",
           "r": "Pearson's r between predictor and target, p unadjusted", "auc": AUC_NOTE}
    boot = (prediction.get("provenance") or {}).get("bootstrap") or {}
    if boot:
        out["intervals"] = (f"{int(round(100 * boot.get('confidence', 0.95)))}% {boot.get('method', 'percentile')} "
                            f"bootstrap over queries, {boot.get('n_boot')} resamples, seed {boot.get('seed')}")
    out["normalisation"] = NORMALISATION.format(k=settings.get("k", "k"))
    index = _partial_index(prediction, scope)
    if index is not None:
        size = f" ({index['n_documents']:,} documents)" if index.get("n_documents") else ""
        out["index"] = (f"partial index: every predictor that reads the index (pre-retrieval statistics, NQC/WIG/SMV's "
                        f"corpus score, Clarity, UEF) reads the data folder's passages{size}, not the full collection "
                        f"(the CSV's partial and pool columns)")
    else:
        out["index"] = "full-corpus index"
    if prediction.get("pool"):  # issue 35: statistics built from these topics' pools are named and left out
        out["pool"] = prediction.get("pool_note") or "pool-built index statistics"
    for target, found in ((prediction.get("h2g_ceiling") or {}).get(scope) or {}).items():
        out[f"ceiling {target}"] = ceiling_text(target, found)  # what no predictor of that target can beat
    return out
