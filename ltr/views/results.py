"""The Results page's tables and figure: NDCG@k against training time, per-fold tables, failed runs."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ltr.cost import completed_runs, cost_effectiveness, in_configuration as runs_in_configuration  # noqa: F401  (the page helpers' names)
from ltr.cost import MINUTES_AXIS_TITLE, MINUTES_CONVENTION, one_run_per_fold_and_seed
from ltr.data.datasets import display_name  # noqa: F401  (the Results page names data by it)
from ltr.ndcg_conventions import NDCG_CUTOFFS  # noqa: F401  (the Results page's metric choices)
from ltr.losses import LOSS_NAMES
from ltr.report.runs import variant_loss
from ltr.store import RunStore


def result_options(store: RunStore) -> pd.DataFrame:
    """``(data, model, runs)`` combinations with at least one completed run."""
    runs = store.list_runs(status="completed")
    if runs.empty:
        return pd.DataFrame(columns=["data", "model", "runs"])
    return runs.groupby(["data", "model"]).size().rename("runs").reset_index()


def ranker_choices(options: pd.DataFrame, data: str) -> list[str]:
    """The rankers with completed runs on ``data``, the neural ones first: a tree ranker (LambdaMART) is a
    baseline row of their tables (:func:`ltr.report.runs.tree_baselines`), so it is the default only when alone."""
    from ltr.gbdt import is_gbdt_model

    return sorted(options.loc[options["data"] == data, "model"], key=lambda m: (is_gbdt_model(m), m))


def configuration_choices(runs: pd.DataFrame) -> pd.DataFrame:
    """The configurations of ``runs`` (label, runs, losses with their folds), the default first."""
    from ltr.report.runs import configurations

    return configurations(runs)


def missing_folds(runs: pd.DataFrame) -> dict[str, list[int]]:
    """``{loss: folds it lacks that another loss of the selection has}`` (empty when complete)."""
    every = set(runs["fold"])
    return {loss: sorted(every - set(g["fold"])) for loss, g in runs.groupby("loss") if set(g["fold"]) != every}


# One colour and marker per loss, in the study's order (LearnDCG: the black star).
_LOSS_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#000000", "#17becf")
_LOSS_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "x", "pentagon",
                 "hexagon", "star", "star-square")

# Tree-ranker baselines (LambdaMART), drawn apart from every neural loss.
_BASELINE_STYLE = ("#8c6d31", "diamond-wide")


def axis_range(values, *, min_span: float, floor: float | None = None,
               ceiling: float | None = None) -> list[float]:  # noqa: D401
    """A range around ``values`` with a margin, never narrower than ``min_span`` (a single point gets a
    sane window rather than plotly's automatic one), kept within ``[floor, ceiling]``."""
    lo, hi = float(min(values)), float(max(values))
    pad = max((hi - lo) * 0.12, (min_span - (hi - lo)) / 2)
    lo, hi = lo - pad, hi + pad
    if floor is not None and lo < floor:
        lo, hi = floor, hi + (floor - lo)
    if ceiling is not None and hi > ceiling:
        lo, hi = lo - (hi - ceiling), ceiling
    if floor is not None:
        lo = max(lo, floor)
    return [lo, hi]


# What the x-axis measures, per run: the one cost convention (ltr.cost.MINUTES_CONVENTION), what
# ``python -m ltr runs`` prints as minutes.
X_AXIS_TITLE = MINUTES_AXIS_TITLE
# The caption under the scatter and its table: what a point's minutes are, the one-time pre-training named.
COST_CAPTION = ("Per loss: each run (small points, one per fold and seed) and the mean over them (large marker), "
                "bars from the lowest to the highest run. Cost convention: " + MINUTES_CONVENTION + "; the table's "
                "pretrain_once_minutes is that one-time pre-training (each surrogate once) and pretrain_shared_by "
                "the runs sharing it, as `python -m ltr runs` prints them. The training loop excludes validation, "
                "checkpoints, start-up and the warm-up step; hover a run for its wall and CPU seconds, its threads "
                "and the machine's load when it started (a slow run under load is contention).")


def _pretraining_hover(folds: pd.DataFrame) -> list[str]:
    """Per run: the hover's pre-training line (empty without one) — its share, the one-time cost and the runs
    sharing it, and whether this run built the surrogate."""
    lines = []
    for row in folds.to_dict("records"):
        once = row.get("pretrain_once_seconds")
        if once is None or pd.isna(once):
            lines.append("")
            continue
        paid = row.get("pretrain_paid")
        how = ("built in this run" if paid == 1 else "loaded from the cache" if paid == 0
               else "built or loaded: not recorded")
        lines.append(f"<br>+ {row['pretrain_share_seconds']:.1f} s: its share of a one-time {once:.1f} s "
                     f"pre-training shared by {int(row['pretrain_shared_by'])} run(s) ({how})")
    return lines


def cost_figure(table: pd.DataFrame, k: int, *, title: str, runs: pd.DataFrame | None = None) -> go.Figure:
    """NDCG@k against training minutes: per loss, every fold as a small faint point (with ``runs``) and
    the mean over folds as a large marker whose bars span the folds' minimum to maximum (the spread as
    it is, never below zero minutes). Losses are told apart by colour, marker and legend (no text
    labels to collide); the axes stay within [0, 1] NDCG and start at 0 minutes, also for one point."""
    traces, xs, ys = [], [], []  # plain trace dicts, validated once when the figure is built
    latest = one_run_per_fold_and_seed(runs) if runs is not None and not runs.empty else None
    for row in table.to_dict("records"):
        loss = variant_loss(row["loss"])  # a variant (loss parameters) is drawn as its loss
        if loss in LOSS_NAMES:
            i = LOSS_NAMES.index(loss)
            colour, symbol = _LOSS_COLOURS[i % len(_LOSS_COLOURS)], _LOSS_SYMBOLS[i % len(_LOSS_SYMBOLS)]
        else:  # a tree baseline (lambdamart (LightGBM), ltr.report.runs.tree_baselines): not one of the losses' styles
            colour, symbol = _BASELINE_STYLE
        if latest is not None:
            folds = latest[latest["loss"] == row["loss"]].sort_values(["fold", "seed"] if "seed" in latest else "fold")
            custom = folds[["fold", "train_seconds", "cpu_seconds", "load_at_start", "threads"]].astype(float)
            custom = custom.astype(object).assign(pretraining=_pretraining_hover(folds)).to_numpy()
            traces.append({
                "type": "scatter", "x": folds["minutes"].to_numpy(), "y": folds[f"test_ndcg{k}"].to_numpy(),
                "mode": "markers", "name": f"{row['loss']} (folds)", "legendgroup": row["loss"], "showlegend": False,
                "opacity": 0.45, "marker": {"size": 7, "color": colour, "symbol": symbol}, "customdata": custom,
                "hovertemplate": (f"{row['loss']} fold %{{customdata[0]:.0f}}<br>NDCG@{k} %{{y:.4f}}<br>%{{x:.2f}} min; "
                                  "loop %{customdata[1]:.1f} s wall, %{customdata[2]:.1f} s CPU on "
                                  "%{customdata[4]:.0f} thread(s)%{customdata[5]}"
                                  "<br>load at start %{customdata[3]:.2f}<extra></extra>")})
            xs += folds["minutes"].tolist()
            ys += folds[f"test_ndcg{k}"].tolist()
        once = row.get("pretrain_once_minutes")
        shared = "" if once is None or pd.isna(once) else (
            f"<br>incl. a share of {once:.2f} min one-time pre-training shared by "
            f"{int(row['pretrain_shared_by'])} run(s)")
        traces.append({
            "type": "scatter", "x": [row["minutes_mean"]], "y": [row["ndcg_mean"]], "mode": "markers",
            "name": row["loss"], "legendgroup": row["loss"],
            "marker": {"size": 16 if loss == "learndcg" else 12, "color": colour, "symbol": symbol,
                       "line": {"color": "white", "width": 1}},
            "error_x": {"type": "data", "symmetric": False, "array": [row["minutes_max"] - row["minutes_mean"]],
                        "arrayminus": [row["minutes_mean"] - row["minutes_min"]], "thickness": 1, "color": colour},
            "error_y": {"type": "data", "symmetric": False, "array": [row["ndcg_max"] - row["ndcg_mean"]],
                        "arrayminus": [row["ndcg_mean"] - row["ndcg_min"]], "thickness": 1, "color": colour},
            "hovertemplate": (f"{row['loss']} (mean of {row['folds']} fold(s))<br>NDCG@{k} %{{y:.4f}} "
                              f"[{row['ndcg_min']:.4f}, {row['ndcg_max']:.4f}]<br>%{{x:.2f}} min "
                              f"[{row['minutes_min']:.2f}, {row['minutes_max']:.2f}]{shared}<extra></extra>")})
        xs += [row["minutes_min"], row["minutes_max"]]
        ys += [row["ndcg_min"], row["ndcg_max"]]
    layout = {"title": {"text": title}, "height": 480, "showlegend": True, "legend": {"title": {"text": "loss"}},
              "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
              "xaxis": {"title": {"text": X_AXIS_TITLE}},
              "yaxis": {"title": {"text": f"test NDCG@{k}"}}}
    if xs:  # time from 0: costs compare as ratios; NDCG within [0, 1]
        layout["xaxis"]["range"] = [0.0, max(max(xs) * 1.15, 0.05)]
        layout["yaxis"]["range"] = axis_range(ys, floor=0.0, ceiling=1.0, min_span=0.05)
    return go.Figure({"data": traces, "layout": layout})


def fold_table(runs: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Test NDCG@k per fold (rows) and loss (columns), each the fold's mean over its seeds, with the mean over
    folds as the last row."""
    if runs.empty:
        return pd.DataFrame()
    table = one_run_per_fold_and_seed(runs).pivot_table(index="fold", columns="loss", values=f"test_ndcg{k}",
                                                        aggfunc="mean")
    table = table[[n for n in LOSS_NAMES if n in table.columns] + [c for c in table.columns if c not in LOSS_NAMES]]
    table.index = [f"fold {f}" for f in table.index]
    table.loc["mean"] = table.mean()
    return table


def fold_detail(runs: pd.DataFrame, loss: str) -> pd.DataFrame:
    """The runs of one loss, per fold and seed: test NDCG@k, best epoch, epochs, minutes."""
    cols = ["fold", "seed", "test_ndcg1", "test_ndcg3", "test_ndcg5", "test_ndcg10", "best_epoch", "epochs_done", "minutes",
            "train_seconds", "pretrain_share_seconds", "pretrain_once_seconds", "pretrain_shared_by", "pretrain_paid",
            "cpu_seconds", "threads", "load_at_start", "device", "run_id"]
    latest = one_run_per_fold_and_seed(runs)
    cols = [c for c in cols if c in latest]
    return latest[latest["loss"] == loss].sort_values(["fold", "seed"])[cols].reset_index(drop=True)


def failed_runs(store: RunStore, data: str | None = None, model: str | None = None) -> pd.DataFrame:
    """Failed or cancelled runs (newest first) with their error text."""
    runs = store.list_runs(data=data, model=model, status=["failed", "cancelled"])
    return runs[["data", "fold", "loss", "model", "status", "error", "run_id"]].reset_index(drop=True)


def results_version(runs: pd.DataFrame) -> tuple[int, float]:
    """Changes whenever a run of this selection completes: a cache key for derived tables."""
    return len(runs), float(runs["finished"].max()) if len(runs) else 0.0

