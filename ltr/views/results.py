"""The Results page's tables and figure: NDCG@k against training time, per-fold tables, failed runs."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ltr.store import RunStore, latest_per_loss_and_fold


def result_options(store: RunStore) -> pd.DataFrame:
    """``(data, model, runs)`` combinations with at least one completed run."""
    runs = store.list_runs(status="completed")
    if runs.empty:
        return pd.DataFrame(columns=["data", "model", "runs"])
    return runs.groupby(["data", "model"]).size().rename("runs").reset_index()


def completed_runs(store: RunStore, data: str, model: str) -> pd.DataFrame:
    """Completed runs of a data set and ranker with ``minutes`` = (training + NeuralLoss pre-training) / 60."""
    runs = store.list_runs(data=data, model=model, status="completed")
    runs["minutes"] = (runs["train_seconds"].astype(float).fillna(0.0)
                       + runs["pretrain_seconds"].astype(float).fillna(0.0)) / 60.0
    return runs


def cost_effectiveness(runs: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Per loss: mean and standard deviation over folds of test NDCG@k and of training minutes.

    One row per loss in the study's order; the standard deviation is the sample one (0 for one fold).
    """
    from ltr.losses import LOSS_NAMES

    column = f"test_ndcg{k}"
    if runs.empty:
        return pd.DataFrame(columns=["loss", "folds", "ndcg_mean", "ndcg_std", "minutes_mean", "minutes_std"])
    latest = latest_per_loss_and_fold(runs)
    agg = latest.groupby("loss").agg(folds=("fold", "nunique"), ndcg_mean=(column, "mean"),
                                     ndcg_std=(column, "std"), minutes_mean=("minutes", "mean"),
                                     minutes_std=("minutes", "std")).fillna({"ndcg_std": 0.0, "minutes_std": 0.0})
    order = {name: i for i, name in enumerate(LOSS_NAMES)}
    return agg.reset_index().sort_values("loss", key=lambda s: s.map(lambda n: order.get(n, len(order))),
                                         ignore_index=True)


def cost_figure(table: pd.DataFrame, k: int, *, title: str) -> go.Figure:
    """NDCG@k against training minutes, one point per loss, error bars = std over folds."""
    fig = go.Figure()
    for row in table.to_dict("records"):
        highlight = row["loss"] == "learndcg"
        fig.add_trace(go.Scatter(
            x=[row["minutes_mean"]], y=[row["ndcg_mean"]], mode="markers+text", name=row["loss"],
            text=[row["loss"]], textposition="top center",
            marker={"size": 16, "symbol": "star", "color": "black"} if highlight else {"size": 10},
            error_x={"type": "data", "array": [row["minutes_std"]], "visible": True, "thickness": 1},
            error_y={"type": "data", "array": [row["ndcg_std"]], "visible": True, "thickness": 1},
            hovertemplate=(f"{row['loss']}<br>NDCG@{k} %{{y:.4f}} ± {row['ndcg_std']:.4f}<br>"
                           f"%{{x:.2f}} ± {row['minutes_std']:.2f} min<br>{row['folds']} fold(s)<extra></extra>")))
    fig.update_layout(title=title, height=460, showlegend=False, margin={"l": 50, "r": 20, "t": 60, "b": 50})
    fig.update_xaxes(title_text="training time per fold (minutes, incl. NeuralLoss pre-training)")
    fig.update_yaxes(title_text=f"test NDCG@{k} (mean over folds)")
    return fig


def fold_table(runs: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Test NDCG@k per fold (rows) and loss (columns), with the mean over folds as the last row."""
    from ltr.losses import LOSS_NAMES

    if runs.empty:
        return pd.DataFrame()
    table = latest_per_loss_and_fold(runs).pivot(index="fold", columns="loss", values=f"test_ndcg{k}")
    table = table[[n for n in LOSS_NAMES if n in table.columns] + [c for c in table.columns if c not in LOSS_NAMES]]
    table.index = [f"fold {f}" for f in table.index]
    table.loc["mean"] = table.mean()
    return table


def fold_detail(runs: pd.DataFrame, loss: str) -> pd.DataFrame:
    """The per-fold runs of one loss: test NDCG@k, best epoch, epochs, minutes."""
    cols = ["fold", "test_ndcg1", "test_ndcg3", "test_ndcg5", "test_ndcg10", "best_epoch", "epochs_done", "minutes",
            "device", "run_id"]
    latest = latest_per_loss_and_fold(runs)
    return latest[latest["loss"] == loss].sort_values("fold")[cols].reset_index(drop=True)


def failed_runs(store: RunStore, data: str | None = None, model: str | None = None) -> pd.DataFrame:
    """Failed or cancelled runs (newest first) with their error text."""
    runs = store.list_runs(data=data, model=model, status=["failed", "cancelled"])
    return runs[["data", "fold", "loss", "model", "status", "error", "run_id"]].reset_index(drop=True)


def results_version(runs: pd.DataFrame) -> tuple[int, float]:
    """Changes whenever a run of this selection completes: a cache key for derived tables."""
    return len(runs), float(runs["finished"].max()) if len(runs) else 0.0

