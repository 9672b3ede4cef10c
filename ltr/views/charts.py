"""Live charts of the Training page: step metrics and validation NDCG per fold, as plotly figures."""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from ltr.losses import LEARNABLE_LOSSES
from ltr.store import RunStore

CHART_MAX_POINTS = 1000

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
    return store.run_folds(list(run_ids))


def _fold_colour(fold: int) -> str:
    return FOLD_COLOURS[(int(fold) - 1) % len(FOLD_COLOURS)]


def panel_axes(row: int, col: int, n_cols: int) -> dict[str, str]:
    """The axis references of panel ``(row, col)`` (1-based) in a grid of ``n_cols`` columns, as
    :func:`grid_layout` names them: ``{"xaxis": "x3", "yaxis": "y3"}``."""
    k = (row - 1) * n_cols + col
    suffix = "" if k == 1 else str(k)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def grid_layout(rows: int, cols: int, titles: Sequence[str], *, horizontal_spacing: float,
                vertical_spacing: float, shared_y_rows: bool = False) -> dict:
    """A plotly layout dict for a ``rows`` x ``cols`` grid of panels (row-major, titled), what
    ``make_subplots`` builds, written as plain data: building the figure from dicts in one validation
    pass costs a fraction of make_subplots plus per-trace ``add_trace(row=, col=)`` and ``update_*``
    calls, on a chart redrawn every 2 s. ``shared_y_rows``: every panel of a row follows the row's
    first y axis (the others hide their tick labels)."""
    width = (1 - horizontal_spacing * (cols - 1)) / cols
    height = (1 - vertical_spacing * (rows - 1)) / rows
    layout: dict = {"annotations": []}
    for r in range(rows):
        top = 1 - r * (height + vertical_spacing)
        for c in range(cols):
            left = c * (width + horizontal_spacing)
            axes = panel_axes(r + 1, c + 1, cols)
            x_name, y_name = axes["xaxis"], axes["yaxis"]
            x_key, y_key = x_name.replace("x", "xaxis", 1), y_name.replace("y", "yaxis", 1)
            layout[x_key] = {"domain": [left, left + width], "anchor": y_name}
            layout[y_key] = {"domain": [top - height, top], "anchor": x_name}
            if shared_y_rows and c > 0:
                layout[y_key].update(matches=panel_axes(r + 1, 1, cols)["yaxis"], showticklabels=False)
            index = r * cols + c
            if index < len(titles) and titles[index]:
                layout["annotations"].append({"text": titles[index], "x": left + width / 2, "y": top,
                                              "xref": "paper", "yref": "paper", "xanchor": "center",
                                              "yanchor": "bottom", "showarrow": False, "font": {"size": 16}})
    return layout


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
    points = store.live_step_points(list(run_ids), list(names), max_points=max_points)
    folds = _fold_of(store, run_ids)
    ordered = sorted({run_id for run_id, _name in points}, key=lambda r: folds.get(r, 0))
    columns = ordered if per_fold and ordered else [None]
    grid = len(names) > 1 or len(columns) > 1
    n_rows, n_cols = (len(names), len(columns)) if per_fold else (1, len(names))
    traces = []
    for i, name in enumerate(names):
        for j, run_id in enumerate(ordered):
            arr = points.get((run_id, name))
            if arr is None:
                continue
            fold = folds.get(run_id, 0)
            # hover: step, epoch and the value (y itself, or the logged value beside Δ on the offset view)
            trace = {"type": "scatter", "x": arr[:, 0].astype(np.int64),
                     "y": arr[:, 2] - arr[0, 2] if offset else arr[:, 2], "mode": "lines", "name": f"fold {fold}",
                     "legendgroup": f"fold {fold}", "showlegend": i == 0, "line": {"color": _fold_colour(fold)},
                     "customdata": arr[:, 1:3] if offset else arr[:, 1].astype(np.int64),
                     "hovertemplate": (f"fold {fold}<br>step %{{x}}<br>epoch %{{customdata[0]}}<br>"
                                       "%{customdata[1]:.6g} (Δ %{y:.3g})<extra></extra>" if offset else
                                       f"fold {fold}<br>step %{{x}}<br>epoch %{{customdata}}<br>%{{y:.6g}}"
                                       "<extra></extra>")}
            if grid:  # one panel per metric (folds overlaid), or per metric and fold
                trace.update(panel_axes(i + 1, j + 1, n_cols) if per_fold else panel_axes(1, i + 1, n_cols))
            traces.append(trace)
    titles = ([f"{METRIC_TITLES.get(n, n)} · fold {folds.get(r, 0)}" for n in names for r in columns] if per_fold
              else [METRIC_TITLES.get(n, n) for n in names])
    layout = (grid_layout(n_rows, n_cols, titles, horizontal_spacing=0.04 if per_fold else 0.08,
                          vertical_spacing=0.18, shared_y_rows=per_fold)
              if grid else {"xaxis": {}, "yaxis": {}})
    y_title = (("change since step 0" if grid else f"{METRIC_TITLES.get(names[0], names[0])} − its first value")
               if offset else None if grid else METRIC_TITLES.get(names[0], names[0]))
    for key, axis in layout.items():
        if key.startswith("xaxis"):
            axis["title"] = {"text": "training step"}
        elif key.startswith("yaxis") and y_title:
            axis["title"] = {"text": y_title}
    layout.update(title={"text": title}, height=max(340, 260 * n_rows), margin={"l": 50, "r": 20, "t": 70, "b": 40},
                  uirevision="|".join(run_ids) + "|".join(names) + f"|{per_fold}|{offset}", legend={"title": {"text": ""}})
    return go.Figure({"data": traces, "layout": layout}), sum(len(arr) for arr in points.values())


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
    traces = []
    for run_id, s in sorted(series.groupby("run_id"), key=lambda item: folds.get(item[0], 0)):
        fold = folds.get(run_id, 0)
        traces.append({"type": "scatter", "x": s["epoch"].to_numpy(), "y": s["value"].to_numpy(),
                       "mode": "lines+markers", "name": f"fold {fold}", "line": {"color": _fold_colour(fold)}})
    layout = {"title": {"text": f"validation {metric.upper()} per epoch"}, "height": 340,
              "margin": {"l": 40, "r": 20, "t": 60, "b": 40}, "uirevision": "|".join(run_ids),
              "xaxis": {"title": {"text": "epoch"}}, "yaxis": {"title": {"text": metric}}}
    return go.Figure({"data": traces, "layout": layout}), len(series)


def has_step_metric(store: RunStore, run_ids: Iterable[str], name: str) -> bool:
    """Whether any of the runs logged ``name`` (an index seek per run, whatever their length)."""
    return any(store.step_range(r, name) is not None for r in run_ids)

