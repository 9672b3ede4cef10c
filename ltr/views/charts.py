"""Live charts of the Training page: step metrics and validation NDCG per fold, as plotly figures."""
from __future__ import annotations

from typing import Iterable, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ltr.store import RunStore

CHART_MAX_POINTS = 1000

# Chart choice -> the step metrics it plots (one panel each). Names are those the trainer logs.
PARAMETER_VIEWS: dict[str, tuple[str, ...]] = {
    "θ_d": ("theta_d",),
    "b_d": ("b_d",),
    "θ_g / b_g": ("theta_g", "b_g"),
    "θ_α / α": ("theta_alpha", "alpha"),
    "θ gradients": ("grad_theta_g", "grad_theta_d", "grad_theta_alpha"),
}
METRIC_TITLES = {
    "theta_d": "θ_d", "theta_g": "θ_g", "theta_alpha": "θ_α", "b_d": "b_d", "b_g": "b_g", "alpha": "α",
    "grad_theta_d": "∂L/∂θ_d", "grad_theta_g": "∂L/∂θ_g", "grad_theta_alpha": "∂L/∂θ_α", "loss": "training loss",
}
# Fold k always gets the same colour, on every chart and page.
FOLD_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _fold_of(store: RunStore, run_ids: Sequence[str]) -> dict[str, int]:
    runs = store.list_runs(run_ids=list(run_ids))
    return dict(zip(runs["run_id"], runs["fold"].astype(int)))


def _fold_colour(fold: int) -> str:
    return FOLD_COLOURS[(int(fold) - 1) % len(FOLD_COLOURS)]


def step_figure(store: RunStore, run_ids: Sequence[str], names: Sequence[str], *, title: str,
                max_points: int = CHART_MAX_POINTS) -> tuple[go.Figure, int]:
    """Step metrics ``names`` (one panel each) over training steps, one line per fold.

    Returns the figure and the number of points it holds (0: nothing logged yet).
    """
    series = store.step_series(list(run_ids), list(names), max_points=max_points)
    folds = _fold_of(store, run_ids)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[METRIC_TITLES.get(n, n) for n in names],
                        horizontal_spacing=0.08) if len(names) > 1 else go.Figure()
    for col, name in enumerate(names, start=1):
        part = series[series["name"] == name]
        for run_id in sorted(part["run_id"].unique(), key=lambda r: folds.get(r, 0)):
            s = part[part["run_id"] == run_id]
            fold = folds.get(run_id, 0)
            trace = go.Scatter(x=s["step"], y=s["value"], mode="lines", name=f"fold {fold}",
                               legendgroup=f"fold {fold}", showlegend=col == 1,
                               line={"color": _fold_colour(fold)},
                               customdata=s["epoch"], hovertemplate="step %{x}<br>epoch %{customdata}<br>%{y:.4f}")
            if len(names) > 1:
                fig.add_trace(trace, row=1, col=col)
            else:
                fig.add_trace(trace)
    fig.update_layout(title=title, height=340, margin={"l": 40, "r": 20, "t": 60, "b": 40},
                      uirevision="|".join(run_ids) + "|".join(names), legend_title_text="")
    fig.update_xaxes(title_text="training step")
    if len(names) == 1:
        fig.update_yaxes(title_text=METRIC_TITLES.get(names[0], names[0]))
    return fig, len(series)


def validation_figure(store: RunStore, run_ids: Sequence[str], metric: str = "ndcg@10") -> tuple[go.Figure, int]:
    """Validation ``metric`` per epoch, one line per fold."""
    series = store.epoch_series(list(run_ids), [metric])
    folds = _fold_of(store, run_ids)
    fig = go.Figure()
    for run_id in sorted(series["run_id"].unique(), key=lambda r: folds.get(r, 0)):
        s = series[series["run_id"] == run_id]
        fold = folds.get(run_id, 0)
        fig.add_trace(go.Scatter(x=s["epoch"], y=s["value"], mode="lines+markers", name=f"fold {fold}",
                                 line={"color": _fold_colour(fold)}))
    fig.update_layout(title=f"validation {metric.upper().replace('NDCG', 'NDCG')} per epoch", height=340,
                      margin={"l": 40, "r": 20, "t": 60, "b": 40}, uirevision="|".join(run_ids))
    fig.update_xaxes(title_text="epoch")
    fig.update_yaxes(title_text=metric)
    return fig, len(series)


def has_step_metric(store: RunStore, run_ids: Iterable[str], name: str) -> bool:
    return any(name in store.step_metric_names(r) for r in run_ids)

