"""Drift or learning? What the Training and Results pages show beside LearnDCG's θ trajectories: the drift
reference line θ₀ + loss_lr × step (:func:`add_drift_reference`), final θ against the steps trained
(:func:`theta_vs_steps`, :func:`fitted_slopes`, :func:`theta_steps_figure`), and the per-run drift
diagnostic (:mod:`ltr.drift`, which says what drift means and how it is measured)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ltr.drift import THETAS, drift_diagnostic, fold_labels  # noqa: F401  (the page helpers' names)
from ltr.store import RunStore
from ltr.views.charts import panel_axes

DRIFT_COLOUR = "#444444"


def add_drift_reference(fig: go.Figure, store: RunStore, run_ids: Sequence[str], names: Sequence[str], *,
                        per_fold: bool = False, offset: bool = False, diagnostic: pd.DataFrame | None = None) -> int:
    """Add the dashed line ``θ₀ + loss_lr × step`` to each θ panel of a :func:`ltr.views.charts.step_figure`
    figure drawn with the same ``per_fold``/``offset`` layout: one line per distinct θ₀ and loss_lr
    (usually one for all folds) on overlaid panels, one per fold on per-fold panels, and
    ``loss_lr × step`` from 0 on the "change since step 0" view. ``diagnostic``: the runs'
    :func:`drift_diagnostic` when the caller has it already. Returns the lines added."""
    diag = drift_diagnostic(store, run_ids) if diagnostic is None else diagnostic
    fold_columns = sorted(diag["fold"].dropna().unique().tolist()) if per_fold else []
    grid = len(names) > 1 or len(fold_columns) > 1
    n_cols = len(fold_columns) if per_fold and grid else len(names)
    traces = []
    for row_index, name in enumerate(names, start=1):
        part = diag[diag["parameter"] == name]
        if part.empty:
            continue
        groups = (part.groupby("fold") if per_fold
                  else part.groupby([part["theta_0"].round(9), part["loss_lr"]]))
        for _key, g in groups:
            last, lr = int(g["steps"].max()), float(g["loss_lr"].iloc[0])
            if not np.isfinite(lr):  # a run whose config names no learning rate: no reference to draw
                continue
            start = 0.0 if offset else float(g["theta_0"].iloc[0])
            trace = {"type": "scatter", "x": [0, last], "y": [start, start + lr * last], "mode": "lines",
                     "name": f"drift reference θ₀ + {lr:g}·step", "legendgroup": "drift", "showlegend": not traces,
                     "line": {"color": DRIFT_COLOUR, "dash": "dash", "width": 1.5},
                     "hovertemplate": "drift reference<br>step %{x}<br>%{y:.4f}<extra></extra>"}
            if per_fold and grid:
                trace.update(panel_axes(row_index, fold_columns.index(g["fold"].iloc[0]) + 1, n_cols))
            elif grid:
                trace.update(panel_axes(1, row_index, n_cols))
            traces.append(trace)
    if traces:
        fig.add_traces(traces)
    return len(traces)


def theta_vs_steps(store: RunStore, runs: pd.DataFrame, parameter: str = "theta_d") -> pd.DataFrame:
    """Final θ against the steps trained, one row per run with a learnable θ: ``loss`` (the variant
    label when ``runs`` has one), fold, seed (None where ``runs`` names none), steps, final θ, loss_lr, run id."""
    cols = ["loss", "fold", "seed", "steps", "theta_final", "loss_lr", "run_id"]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    diag = drift_diagnostic(store, list(runs["run_id"]))
    diag = diag[diag["parameter"] == parameter]
    label = dict(zip(runs["run_id"], runs["variant"] if "variant" in runs else runs["loss"]))
    seed = dict(zip(runs["run_id"], runs["seed"])) if "seed" in runs else {}
    out = diag.assign(loss=diag["run_id"].map(label), seed=diag["run_id"].map(lambda r: seed.get(r)))[cols]
    return out.sort_values(["loss", "fold", "seed"], ignore_index=True)


def fitted_slopes(points: pd.DataFrame) -> pd.DataFrame:
    """Least-squares slope of final θ on steps per loss (NaN with fewer than two distinct step counts),
    beside the loss-parameter learning rate it would equal under pure drift."""
    rows = []
    for loss, group in points.groupby("loss"):
        slope = intercept = np.nan
        if group["steps"].nunique() >= 2:
            slope, intercept = np.polyfit(group["steps"].astype(float), group["theta_final"].astype(float), 1)
        rows.append({"loss": loss, "runs": len(group), "slope_per_step": slope, "intercept": intercept,
                     "loss_lr": float(group["loss_lr"].median())})
    return pd.DataFrame(rows, columns=["loss", "runs", "slope_per_step", "intercept", "loss_lr"])


def theta_steps_figure(points: pd.DataFrame, parameter: str = "θ_d") -> go.Figure:
    """Final θ against steps, one point per run (labelled by fold, and seed where there are several), a fitted
    line per loss with its slope."""
    fig = go.Figure()
    slopes = fitted_slopes(points).set_index("loss")
    labels = fold_labels(points)
    for loss, group in points.groupby("loss"):
        fig.add_trace(go.Scatter(x=group["steps"], y=group["theta_final"], mode="markers+text", name=loss,
                                 text=[labels[i] for i in group.index], textposition="top center",
                                 customdata=group["fold"], marker={"size": 10},
                                 hovertemplate=f"{loss} fold %{{customdata}}<br>%{{x}} steps<br>"
                                               f"{parameter} %{{y:.4f}}<extra></extra>"))
        slope, intercept = slopes.loc[loss, "slope_per_step"], slopes.loc[loss, "intercept"]
        if np.isfinite(slope):
            xs = np.array([group["steps"].min(), group["steps"].max()], dtype=float)
            fig.add_trace(go.Scatter(x=xs, y=intercept + slope * xs, mode="lines", showlegend=False,
                                     name=f"{loss} fit", line={"dash": "dot"},
                                     hovertemplate=f"{loss}: slope {slope:.3g} per step "
                                                   f"(loss lr {slopes.loc[loss, 'loss_lr']:g})<extra></extra>"))
    fig.update_layout(title=f"final {parameter} against training steps (one point per run)", height=380,
                      margin={"l": 50, "r": 20, "t": 60, "b": 50})
    fig.update_xaxes(title_text="training steps")
    fig.update_yaxes(title_text=f"final {parameter}")
    return fig
