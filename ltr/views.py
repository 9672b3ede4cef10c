"""Data and charts for the dashboard's LTR pages: DataFrames and plotly figures built from the store.

Pages only lay out widgets; everything they show comes from here, read from the run store
(:class:`ltr.store.RunStore`) and the job queue (:mod:`core.jobs`). Nothing here imports streamlit,
so every function is testable on its own and the pages stay thin.

Charts stay light with a large store: step series are downsampled by the store
(``max_points`` evenly spaced points per run and metric, first and last kept), so a figure ships
at most ``len(folds) * CHART_MAX_POINTS`` points whatever the run length.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core import jobs
from core.paths import data_folder
from core.ray_cluster import EXECUTORS, ray_settings
from ltr.store import RunStore, run_is_live

JOB_KIND = "ltr.train"
CHART_MAX_POINTS = 1000
TEST_KS = (1, 3, 5, 10)

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
# Config keys that differ between the folds of one experiment and so do not define a run group.
_PER_FOLD_KEYS = ("fold", "data_signature")


def open_store(path: str | None = None) -> RunStore:
    """The run store (default ``cache/runs.sqlite``); use as a context manager, one per script run."""
    return RunStore(path)


# ---------------------------------------------------------------------------- home page
def training_device() -> str:
    """Where a new run will train: ``cuda (<GPU names>)`` when CUDA is available, else ``cpu``."""
    import torch

    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        return f"cuda ({names})"
    return "cpu"


def gpu_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def dataset_overview() -> pd.DataFrame:
    """One row per registered LTR data set: kind, folds, features, folder and whether it is usable."""
    from ltr.data.datasets import DATASETS, DatasetError, resolve_dataset

    rows = []
    for name, spec in DATASETS.items():
        folder = data_folder(name)
        if spec.synthetic:
            status, where = "embedded (generated on first use)", ""
        elif folder is None:
            status, where = "not configured", ""
        else:
            where = str(folder)
            try:
                _spec, found = resolve_dataset(name)
                status = "found" if (found / "Fold1").is_dir() else f"missing: {found} has no Fold1/ folder"
            except DatasetError as exc:
                status = f"missing: {exc}"
        rows.append({"dataset": name, "kind": "synthetic" if spec.synthetic else "LETOR",
                     "folds": spec.n_folds, "features": spec.n_features, "folder": where, "status": status,
                     "description": spec.description})
    return pd.DataFrame(rows, columns=["dataset", "kind", "folds", "features", "folder", "status", "description"])


def trec_dl_status() -> tuple[str, str]:
    """``(folder, status)`` of the TREC DL data folder used by the query-failure study."""
    folder = data_folder("trec_dl")
    if folder is None:
        return "", "not configured (set IRDASH_DATA_TREC_DL or [data] trec_dl in irdash.toml)"
    return str(folder), "found" if folder.is_dir() else "configured but the folder does not exist"


def dataset_choices() -> list[str]:
    """Data sets a new run can use: the synthetic presets, then the configured real ones found."""
    overview = dataset_overview()
    usable = overview[overview["status"].isin(["found"]) | (overview["kind"] == "synthetic")]
    return list(usable.sort_values("kind", key=lambda s: s != "synthetic", kind="stable")["dataset"])


def n_folds(data: str) -> int:
    from ltr.data.datasets import DATASETS

    return DATASETS[data].n_folds


def store_summary(store: RunStore) -> dict[str, int]:
    counts = store.counts()
    return {"total": sum(counts.values()), **counts}


# ---------------------------------------------------------------------------- starting runs
@dataclass(frozen=True)
class TrainingRequest:
    """What the training form asks for; one run (and one job) per fold."""

    data: str
    folds: tuple[int, ...]
    loss: str
    model: str
    epochs: int
    lr: float
    batch_size: int
    slate_length: int | None
    seed: int
    patience: int
    executor: str = "local"  # "local": a trainer process per fold; "ray": a Ray task per fold

    def configs(self) -> list:
        from ltr.train import RunConfig

        return [RunConfig(data=self.data, fold=fold, loss=self.loss, model=self.model, epochs=self.epochs,
                          lr=self.lr, batch_size=self.batch_size, slate_length=self.slate_length or None,
                          seed=self.seed, patience=self.patience) for fold in self.folds]


def submit_training(request: TrainingRequest, *, n_gpus: int | None = None) -> list[int]:
    """Queue one ``python -m ltr train`` job per fold; returns the job ids.

    With GPUs, folds are spread round-robin over them (resource ``cuda:i``; the job runner sets
    ``CUDA_VISIBLE_DEVICES`` so the trainer's automatic device picks that GPU); else all go to
    ``cpu``, where the runner's limit runs them one after another. With ``executor="ray"`` each job
    is ``python -m ltr train --executor ray``: a light local driver that runs the fold as a Ray task
    (resource class ``ray``; Ray picks the node and the GPU, the run streams into this store, and
    cancelling the job cancels the task).
    """
    if not request.folds:
        raise ValueError("choose at least one fold")
    n_gpus = gpu_count() if n_gpus is None else n_gpus
    job_ids = []
    if request.executor not in EXECUTORS:
        raise ValueError(f"executor {request.executor!r}: choose from {', '.join(EXECUTORS)}")
    for i, config in enumerate(request.configs()):
        resource = f"cuda:{i % n_gpus}" if n_gpus else "cpu"
        command = [sys.executable, "-m", "ltr", "train", *config.to_cli_args()]
        label = f"{config.data} · fold {config.fold} · {config.loss} · {config.model}"
        if request.executor == "ray":
            resource, label = "ray", f"{label} · ray"
            command += ["--executor", "ray"]
        meta = {"kind": JOB_KIND, "run_ids": [config.run_id], "data": config.data, "fold": config.fold,
                "loss": config.loss, "model": config.model, "executor": request.executor}
        job_ids.append(jobs.submit(command, label=label, resource=resource, meta=meta, start_worker=False))
    jobs.ensure_worker()
    return job_ids


def executor_setting() -> tuple[str, str]:
    """``(default executor, where Ray runs go)`` for the training form, from ``irdash.toml`` ``[ray]``."""
    settings = ray_settings()
    where = (f"the Ray cluster at `{settings.address}`" if settings.address
             else "a local Ray instance started by each job (set `[ray] address` in irdash.toml for a cluster)")
    return settings.executor, where


# ---------------------------------------------------------------------------- jobs table
def active_job_count() -> int:
    return len(jobs.list_jobs(status=jobs.ACTIVE_STATUSES, limit=None))


def keep_jobs_moving() -> None:
    """Start the job worker if jobs are waiting and none is alive (e.g. after a reboot)."""
    if active_job_count():
        jobs.ensure_worker()


def _elapsed(start: float | None, end: float | None) -> str:
    if start is None:
        return ""
    seconds = int((end or time.time()) - start)
    return f"{seconds // 60}:{seconds % 60:02d}"


def jobs_frame(store: RunStore, job_list: Sequence[jobs.Job]) -> pd.DataFrame:
    """The jobs table: job status, progress from its run (epochs done / total), run status, message.

    ``progress`` is in [0, 1]; a completed run counts as 1 even when early stopping ended it early.
    A run still marked running whose process is gone shows ``running (stale)``.
    """
    columns = ["job", "label", "status", "resource", "progress", "epochs", "run status", "elapsed", "run_id",
               "message"]
    run_ids = [rid for j in job_list for rid in j.meta.get("run_ids", [])[:1]]
    runs = {r["run_id"]: r for r in store.list_runs(run_ids=run_ids).to_dict("records")} if run_ids else {}
    rows = []
    for job in job_list:
        run_id = (job.meta.get("run_ids") or [None])[0]
        run = runs.get(run_id)
        done = int(run["epochs_done"]) if run else 0
        total = int(run["total_epochs"]) if run and _is_number(run["total_epochs"]) else None
        if run and run["status"] == "completed":
            progress = 1.0
        else:
            progress = min(done / total, 1.0) if total else 0.0
        run_status = ""
        if run:
            run_status = run["status"]
            if run_status == "running" and not run_is_live(run):
                run_status = "running (stale)"
        message = ""
        if job.status == "failed":
            message = _last_line(job.log_tail)
        elif run is not None and isinstance(run.get("error"), str) and run["error"]:
            message = _last_line(run["error"])
        rows.append({"job": job.id, "label": job.label, "status": job.status, "resource": job.resource,
                     "progress": progress, "epochs": f"{done}/{total}" if total else "",
                     "run status": run_status, "elapsed": _elapsed(job.started, job.finished),
                     "run_id": run_id or "", "message": message})
    return pd.DataFrame(rows, columns=columns)


def ltr_jobs(limit: int = 30) -> list[jobs.Job]:
    """The most recent training jobs started from the dashboard (newest first)."""
    return [j for j in jobs.list_jobs(limit=limit * 4) if j.meta.get("kind") == JOB_KIND][:limit]


def _is_number(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _last_line(text: str | None) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip() and not ln.startswith("[job runner]")]
    return lines[-1] if lines else (text or "").strip()


# ---------------------------------------------------------------------------- run groups
@dataclass(frozen=True)
class RunGroup:
    """The folds of one experiment: runs whose configs differ only in the fold."""

    key: str
    label: str
    run_ids: tuple[str, ...]
    folds: tuple[int, ...]
    last_active: float


def run_groups(store: RunStore, **filters) -> list[RunGroup]:
    """Runs grouped by config minus fold, most recently active group first."""
    runs = store.list_runs(with_config=True, **filters)
    if runs.empty:
        return []
    runs["last_active"] = runs[["created", "heartbeat", "finished"]].max(axis=1)
    runs["group"] = [json.dumps({k: v for k, v in c.items() if k not in _PER_FOLD_KEYS}, sort_keys=True)
                     for c in runs["config"]]
    # One run per (group, fold): configs differing only in the fold share a group, so duplicates
    # only come from a reused store path; keep the most recently active.
    runs = runs.sort_values(["group", "fold", "last_active"]).drop_duplicates(["group", "fold"], keep="last")
    groups = []
    for key, run_ids, folds, last_active in zip(*_grouped(runs)):
        cfg = json.loads(key)
        extra = " · ".join(f"{name} {cfg[name]}" for name in ("epochs", "lr", "batch_size", "seed") if name in cfg)
        label = (f"{cfg.get('data')} · {cfg.get('loss')} · {cfg.get('model')} · {extra} · "
                 f"folds {','.join(str(f) for f in folds)}")
        groups.append(RunGroup(key, label, tuple(run_ids), tuple(int(f) for f in folds), float(last_active)))
    return sorted(groups, key=lambda grp: grp.last_active, reverse=True)


def _grouped(runs: pd.DataFrame):
    g = runs.groupby("group", sort=False)
    return g.size().index, g["run_id"].agg(list), g["fold"].agg(list), g["last_active"].max()


def group_runs(store: RunStore, group: RunGroup) -> pd.DataFrame:
    """The group's runs, one per fold: status, epochs, best epoch, test NDCG@10, error."""
    runs = store.list_runs(run_ids=list(group.run_ids)).sort_values("fold")
    runs["status"] = [("running (stale)" if r["status"] == "running" and not run_is_live(r) else r["status"])
                      for r in runs.to_dict("records")]
    return runs[["fold", "status", "epochs_done", "total_epochs", "best_epoch", "test_ndcg10", "train_seconds",
                 "device", "error", "run_id"]].reset_index(drop=True)


# ---------------------------------------------------------------------------- live charts
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


# ---------------------------------------------------------------------------- results
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
    # One run per (loss, fold): the latest if a fold was rerun with other hyper-parameters.
    latest = runs.sort_values("finished").drop_duplicates(["loss", "fold"], keep="last")
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
    latest = runs.sort_values("finished").drop_duplicates(["loss", "fold"], keep="last")
    table = latest.pivot(index="fold", columns="loss", values=f"test_ndcg{k}")
    table = table[[n for n in LOSS_NAMES if n in table.columns] + [c for c in table.columns if c not in LOSS_NAMES]]
    table.index = [f"fold {f}" for f in table.index]
    table.loc["mean"] = table.mean()
    return table


def fold_detail(runs: pd.DataFrame, loss: str) -> pd.DataFrame:
    """The per-fold runs of one loss: test NDCG@k, best epoch, epochs, minutes."""
    cols = ["fold", "test_ndcg1", "test_ndcg3", "test_ndcg5", "test_ndcg10", "best_epoch", "epochs_done", "minutes",
            "device", "run_id"]
    sel = runs[runs["loss"] == loss].sort_values("finished").drop_duplicates("fold", keep="last")
    return sel.sort_values("fold")[cols].reset_index(drop=True)


def failed_runs(store: RunStore, data: str | None = None, model: str | None = None) -> pd.DataFrame:
    """Failed or cancelled runs (newest first) with their error text."""
    runs = store.list_runs(data=data, model=model, status=["failed", "cancelled"])
    return runs[["data", "fold", "loss", "model", "status", "error", "run_id"]].reset_index(drop=True)


def results_version(runs: pd.DataFrame) -> tuple[int, float]:
    """Changes whenever a run of this selection completes: a cache key for derived tables."""
    return len(runs), float(runs["finished"].max()) if len(runs) else 0.0


def significance(store: RunStore, data: str, model: str, *, holm: bool = False) -> pd.DataFrame:
    """The ``ltr report`` significance table for one data set and ranker (see :mod:`ltr.report`).

    Raises :class:`ltr.report.ReportError` (a ``ValueError``) when nothing can be compared.
    """
    from ltr.report import significance_table

    return significance_table(store, data, model, holm=holm)


def significance_display(table: pd.DataFrame, *, show_p: bool = False) -> pd.DataFrame:
    """The table as the report prints it (daggers on significant baselines), p-values appended on request."""
    from ltr.report import display_table

    shown = display_table(table).set_index("loss")
    if show_p:
        p_cols = [c for c in table.columns if c.startswith("p@") or c.startswith("p_holm@")]
        shown = shown.join(table.set_index("loss")[p_cols])
    return shown


def significance_legend(table: pd.DataFrame) -> str:
    from ltr.report import ALPHA, BETTER_MARK, WORSE_MARK

    if not any(c.startswith("p@") for c in table.columns):
        return (f"Nothing to test yet: train {table.attrs.get('candidate', 'learndcg')} and at least one "
                f"baseline on the same folds. Values are means over folds.")
    holm = "Holm-corrected " if table.attrs.get("holm") else ""
    text = (f"{BETTER_MARK} / {WORSE_MARK}: {table.attrs.get('candidate', 'learndcg')} is significantly better / "
            f"worse than this loss (two-sided paired t-test over the pooled test queries of all folds, "
            f"{holm}p < {table.attrs.get('alpha', ALPHA)}). Values are means over folds.")
    if table.attrs.get("left_out"):
        text += f" {table.attrs['left_out']} older run(s) of the same loss and fold were left out (the latest is used)."
    return text


def significance_csv(table: pd.DataFrame) -> str:
    """The full table (means, differences, p-values, flags) as CSV, like ``ltr report --csv``."""
    return table.to_csv(index=False)


def significance_latex(table: pd.DataFrame) -> str:
    from ltr.report import to_latex

    return to_latex(table)
