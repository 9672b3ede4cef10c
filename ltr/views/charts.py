"""Live charts of the Training page: step metrics and validation NDCG per fold, as plotly figures."""
from __future__ import annotations

from typing import Iterable, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ltr.store import RunStore

CHART_MAX_POINTS = 1000
LEARNABLE_LOSSES = ("learndcg", "learndcg_meta")  # the losses that log learnable θ as they learn

# Chart choice -> the step metrics it plots (one panel each). Names are those the trainer logs.
PARAMETER_VIEWS: dict[str, tuple[str, ...]] = {
    "θ_d": ("theta_d",),
    "b_d": ("b_d",),
    "p (learndcg_meta)": ("p_d",),
    "θ_g / b_g": ("theta_g", "b_g"),
    "θ_α / α": ("theta_alpha", "alpha"),
    "θ gradients": ("grad_theta_g", "grad_theta_d", "grad_theta_alpha"),
}
METRIC_TITLES = {
    "theta_d": "θ_d", "theta_g": "θ_g", "theta_alpha": "θ_α", "b_d": "b_d", "b_g": "b_g", "alpha": "α", "p_d": "p (discount power)",
    "grad_theta_d": "∂L/∂θ_d", "grad_theta_g": "∂L/∂θ_g", "grad_theta_alpha": "∂L/∂θ_α", "loss": "training loss",
}
# How the folds of one chart are laid out (the Training page's "Folds" control -> step_figure options).
# Folds often follow exactly the same path (θ_d drifts by about the learning rate per step whatever
# the fold), so overlaid lines hide each other: one panel per fold, or each fold's change since its
# first logged step, keeps every fold visible.
FOLD_LAYOUTS: dict[str, dict] = {
    "one panel per fold": {"per_fold": True, "offset": False},
    "change since step 0": {"per_fold": False, "offset": True},
    "overlaid": {"per_fold": False, "offset": False},
}
# Fold k always gets the same colour, on every chart and page.
FOLD_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _fold_of(store: RunStore, run_ids: Sequence[str]) -> dict[str, int]:
    runs = store.list_runs(run_ids=list(run_ids))
    return dict(zip(runs["run_id"], runs["fold"].astype(int)))


def _fold_colour(fold: int) -> str:
    return FOLD_COLOURS[(int(fold) - 1) % len(FOLD_COLOURS)]


def step_figure(store: RunStore, run_ids: Sequence[str], names: Sequence[str], *, title: str,
                max_points: int = CHART_MAX_POINTS, per_fold: bool = False,
                offset: bool = False) -> tuple[go.Figure, int]:
    """Step metrics ``names`` over training steps, one line per fold.

    Default: one panel per metric, the folds overlaid. ``per_fold``: a grid of panels, one row per
    metric and one column per fold (shared y axis per row, so folds compare honestly, and a fold is
    visible even where its line would lie exactly on another's). ``offset``: each fold's value minus
    its first logged value (the change since step 0), which separates folds that start apart and
    shows the size of a drift directly. Returns the figure and the number of points it holds.
    """
    series = store.live_step_series(list(run_ids), list(names), max_points=max_points)
    folds = _fold_of(store, run_ids)
    ordered = sorted(series["run_id"].unique(), key=lambda r: folds.get(r, 0))
    columns = ordered if per_fold and ordered else [None]
    grid = len(names) > 1 or len(columns) > 1
    titles = ([f"{METRIC_TITLES.get(n, n)} · fold {folds.get(r, 0)}" for n in names for r in columns] if per_fold
              else [METRIC_TITLES.get(n, n) for n in names])
    fig = (make_subplots(rows=len(names) if per_fold else 1, cols=len(columns) if per_fold else len(names),
                         subplot_titles=titles, horizontal_spacing=0.04 if per_fold else 0.08,
                         vertical_spacing=0.18, shared_yaxes="rows" if per_fold else False)
           if grid else go.Figure())
    for i, name in enumerate(names):
        part = series[series["name"] == name]
        for j, run_id in enumerate(ordered):
            s = part[part["run_id"] == run_id]
            if s.empty:
                continue
            fold = folds.get(run_id, 0)
            y = s["value"] - s["value"].iloc[0] if offset else s["value"]
            trace = go.Scatter(x=s["step"], y=y, mode="lines", name=f"fold {fold}",
                               legendgroup=f"fold {fold}", showlegend=i == 0, line={"color": _fold_colour(fold)},
                               customdata=s[["epoch", "value"]].to_numpy(),
                               hovertemplate=f"fold {fold}<br>step %{{x}}<br>epoch %{{customdata[0]}}<br>"
                                             "%{customdata[1]:.6g}" + (" (Δ %{y:.3g})" if offset else "")
                                             + "<extra></extra>")
            if per_fold:
                fig.add_trace(trace, row=i + 1, col=j + 1)
            elif grid:
                fig.add_trace(trace, row=1, col=i + 1)
            else:
                fig.add_trace(trace)
    rows = len(names) if per_fold else 1
    fig.update_layout(title=title, height=max(340, 260 * rows), margin={"l": 50, "r": 20, "t": 70, "b": 40},
                      uirevision="|".join(run_ids) + "|".join(names) + f"|{per_fold}|{offset}", legend_title_text="")
    fig.update_xaxes(title_text="training step")
    if offset:
        fig.update_yaxes(title_text="change since step 0" if grid else f"{METRIC_TITLES.get(names[0], names[0])} − "
                                                                      f"its first value")
    elif not grid:
        fig.update_yaxes(title_text=METRIC_TITLES.get(names[0], names[0]))
    return fig, len(series)


def no_parameters_message(store: RunStore, group) -> str:
    """Why a group shows no loss-parameter chart: its loss learns none, or none is logged yet."""
    losses = set(store.list_runs(run_ids=list(group.run_ids))["loss"])
    fixed = sorted(loss for loss in losses if loss not in LEARNABLE_LOSSES)
    if fixed:
        return (f"{', '.join(fixed)} has no learnable loss parameters: only learndcg (θ_g, θ_d, θ_α) and "
                f"learndcg_meta (θ_g, θ_d) learn loss parameters.")
    return "No loss parameters logged yet: LearnDCG's trajectories appear after its first logged steps."


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
    """Whether any of the runs logged ``name`` (an index seek per run, whatever their length)."""
    return any(store.step_range(r, name) is not None for r in run_ids)

