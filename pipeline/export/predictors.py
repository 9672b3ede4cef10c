"""The predictor heatmap of a stored prediction (:mod:`pipeline.predict.store`, ``python -m pipeline predict``)
as a paper figure: predictors x targets of Kendall τ-b oriented so that positive = a higher predictor value
goes with an easier query (the Predicting failure page's colour, ``tau_easier``), ``*`` where the
Holm-corrected p < 0.05 across the table; and its table (CSV + booktabs LaTeX)."""
from __future__ import annotations

import pandas as pd

ALPHA = 0.05
COLUMNS = ("dataset", "predictor", "family", "target", "n", "kendall_tau", "tau_easier", "kendall_p_holm",
           "pearson_r", "auc", "pool", "verdict")


def newest_prediction(dataset: str) -> dict | None:
    """The newest stored prediction whose datasets include ``dataset`` (None when there is none)."""
    from pipeline.predict import store

    for entry in store.list_results():
        if dataset in (entry.get("datasets") or []):
            return store.load(entry["id"])
    return None


def evaluation_table(prediction: dict, scope: str) -> pd.DataFrame:
    rows = [{k: r.get(k) for k in COLUMNS} for r in prediction["evaluation"] if r["dataset"] == scope]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def heatmap_figure(table: pd.DataFrame, title: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    predictors = list(dict.fromkeys(table["predictor"]))
    targets = list(dict.fromkeys(table["target"]))
    cell = {(r["predictor"], r["target"]): r for r in table.to_dict("records")}
    z = np.array([[np.nan if cell.get((p, t), {}).get("tau_easier") is None else cell[(p, t)]["tau_easier"]
                   for t in targets] for p in predictors], dtype=float)
    fig, ax = plt.subplots(figsize=(1.2 * len(targets) + 3.5, 0.35 * len(predictors) + 1.8))
    image = ax.imshow(z, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    for i, p in enumerate(predictors):
        for j, t in enumerate(targets):
            r = cell.get((p, t))
            if r is None or r.get("tau_easier") is None:
                continue
            star = "*" if r.get("kendall_p_holm") is not None and r["kendall_p_holm"] < ALPHA else ""
            ax.text(j, i, f"{r['tau_easier']:.2f}{star}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(targets)), targets, rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(len(predictors)), predictors, fontsize=7)
    fig.colorbar(image, ax=ax, label="τ (easier +)")
    ax.set_title(title, fontsize=8, wrap=True)
    fig.tight_layout()
    return fig


def caption(prediction: dict, scope: str) -> str:
    settings = prediction.get("settings") or {}
    parts = [f"{scope.upper()}: predictors against each task's per-query target, prediction {prediction.get('id')}"]
    for key in ("retrievers", "generators", "judges", "setups"):
        if settings.get(key):
            parts.append(f"{key} {', '.join(map(str, settings[key]))}")
    parts.append("partial index" if prediction.get("partial") else "full-corpus index")
    if prediction.get("pool"):  # issue 35: statistics built from these topics' pools are named and left out
        parts.append(prediction.get("pool_note") or "pool-built index statistics")
    return "; ".join(parts)
