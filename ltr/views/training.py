"""Starting runs from the training form (one background job per run: losses x folds x seeds) and the table of
those jobs."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from core import jobs
from core.fields import (NONNEGATIVE_INT, POSITIVE_FLOAT, POSITIVE_INT, SEED, ZERO_OR_POSITIVE_INT, Field,
                         NumberRule, check_fields)
from core.ray_cluster import EXECUTORS, ray_settings
from ltr.gbdt import GBDT_MODELS, is_gbdt_model
from ltr.jobs import TRAINING
from ltr.store import RunStore, run_is_live
from ltr.views.home import gpu_count

# The training form's number fields: the labels the page shows, the rules ``python -m ltr train`` checks
# its flags with (core.fields), checked by :func:`submit_training` before a job is queued.
TRAINING_FIELDS = {
    "epochs": Field("Epochs", POSITIVE_INT),
    "lr": Field("Learning rate", POSITIVE_FLOAT),
    "batch_size": Field("Batch size (queries)", POSITIVE_INT),
    "slate_length": Field("Slate length (0 = whole lists)", ZERO_OR_POSITIVE_INT),
    "seed": Field("Seed", SEED),
    "n_seeds": Field("Seeds (runs per fold and loss: seed, seed+1, ...)", POSITIVE_INT),
    "patience": Field("Patience (0 = never stop early)", NONNEGATIVE_INT),
}
CONCURRENCY_RULE = NumberRule(int, 0, 64, what="an integer from 0 to 64")  # the Concurrency control's counts
# The form's fields a tree ranker (LambdaMART) has no use for: LightGBM's learning rate and tree settings are
# model parameters (ltr.gbdt), and RunConfig refuses other values than the defaults for them.
NEURAL_ONLY_FIELDS = ("lr", "batch_size", "slate_length")


def tree_model_note(model: str) -> str:
    """What the form's fields mean for a tree ranker (shown in place of the Losses field)."""
    return (f"{model} is a tree ranker trained by LightGBM, its runs stored under loss {GBDT_MODELS[model]!r} (no "
            f"loss to choose): Epochs = the "
            f"most boosting rounds, Patience = rounds without a validation NDCG@10 gain before it stops, Seed = "
            f"LightGBM's; learning rate, batch size and slate length do not apply (LightGBM's own defaults; tree "
            f"settings via `python -m ltr train --model {model} --model-param ...`). Its runs appear as a baseline "
            f"row of the neural rankers' tables on Results and Findings.")


@dataclass(frozen=True)
class TrainingRequest:
    """What the training form asks for: every loss on every fold with every seed, one run (and one job) each.

    The seeds are ``seed, seed + 1, ..., seed + n_seeds - 1`` (a grid's ``seeds = [0, 1, 2]`` is seed 0 with
    3 seeds), so the report averages them like a grid's."""

    data: str
    folds: tuple[int, ...]
    losses: tuple[str, ...]
    model: str
    epochs: int
    lr: float
    batch_size: int
    slate_length: int | None
    seed: int
    patience: int
    executor: str = "local"  # "local": a trainer host runs each run; "ray": a Ray task per run
    n_seeds: int = 1

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.seed, self.seed + self.n_seeds))

    @property
    def run_losses(self) -> tuple[str, ...]:
        """The losses the runs train with: the chosen ones, or a tree ranker's own objective (whatever was chosen)."""
        return (GBDT_MODELS[self.model],) if is_gbdt_model(self.model) else self.losses

    def configs(self) -> list:
        """The runs, loss by loss, then fold, then seed (the order the jobs are queued in). A tree ranker's runs
        take its objective as their loss and leave the neural-only settings at their defaults."""
        from ltr.train import RunConfig

        neural = {} if is_gbdt_model(self.model) else {"lr": self.lr, "batch_size": self.batch_size,
                                                        "slate_length": self.slate_length or None}
        return [RunConfig(data=self.data, fold=fold, loss=loss, model=self.model, epochs=self.epochs, seed=seed,
                          patience=self.patience, **neural)
                for loss in self.run_losses for fold in self.folds for seed in self.seeds]


def submit_training(request: TrainingRequest, *, n_gpus: int | None = None) -> list[int]:
    """Queue one training job per run (losses x folds x seeds; run by a trainer host, :mod:`ltr.jobs`);
    returns the job ids. Every field is checked and every run config built before the first job is queued,
    so a bad request queues nothing.

    With GPUs, runs are spread round-robin over them (resource ``cuda:i``; the job runner sets
    ``CUDA_VISIBLE_DEVICES`` so the trainer's automatic device picks that GPU); else all go to
    ``cpu``, where the runner's limit runs them one after another.

    With ``executor="ray"`` each job is ``python -m ltr train --executor ray`` instead: a light
    local driver that runs its run as a Ray task (resource class ``ray``; Ray picks the node and
    the GPU, the run streams into this store, cancelling the job cancels the task).
    """
    tree = is_gbdt_model(request.model)
    check_fields(*((field, request.slate_length or 0 if name == "slate_length" else getattr(request, name))
                   for name, field in TRAINING_FIELDS.items() if not (tree and name in NEURAL_ONLY_FIELDS)))
    if not request.folds:
        raise ValueError("choose at least one fold")
    if not request.run_losses:
        raise ValueError("choose at least one loss")
    if request.executor not in EXECUTORS:
        raise ValueError(f"executor {request.executor!r}: choose from {', '.join(EXECUTORS)}")
    configs = request.configs()  # an invalid config raises here, before anything is queued
    n_gpus = gpu_count() if n_gpus is None else n_gpus
    job_ids = []
    for i, config in enumerate(configs):
        resource = "ray" if request.executor == "ray" else f"cuda:{i % n_gpus}" if n_gpus else "cpu"
        job_ids.append(TRAINING.submit(config=config, executor=request.executor, resource=resource,
                                       start_worker=False))
    jobs.ensure_worker()
    return job_ids


def executor_setting() -> tuple[str, str]:
    """``(default executor, where Ray runs go)`` for the training form, from ``irdash.toml`` ``[ray]``."""
    settings = ray_settings()
    where = (f"the Ray cluster at `{settings.address}`" if settings.address
             else "a local Ray instance started by each job (set `[ray] address` in irdash.toml for a cluster)")
    return settings.executor, where


# ---------------------------------------------------------------------------- jobs table
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
    waiting = jobs.waiting_for(job_list)
    epoch_seconds = _mean_epoch_seconds(store, [rid for rid, r in runs.items() if r["status"] == "running"])
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
        if job.status == "queued":
            message = waiting.get(job.id, "")
        elif job.status == "running" and run is not None and total and run_id in epoch_seconds:
            # upper estimate: early stopping may end the run sooner
            left = epoch_seconds[run_id] * max(total - done, 0)
            message = f"≤ {_duration(left)} left ({epoch_seconds[run_id]:.1f} s/epoch)"
        if job.status == "failed":
            message = jobs.failure_message(job.log_tail)
        elif run is not None and isinstance(run.get("error"), str) and run["error"]:
            message = jobs.failure_message(run["error"])
        rows.append({"job": job.id, "label": job.label, "status": job.status, "resource": job.resource,
                     "progress": progress, "epochs": f"{done}/{total}" if total else "",
                     "run status": run_status, "elapsed": _elapsed(job.started, job.finished),
                     "run_id": run_id or "", "message": message})
    return pd.DataFrame(rows, columns=columns)


def cancel_tag(job: jobs.Job) -> str:
    """What a training job's Cancel button adds to its number: the loss, the fold and a seed other than 0 it
    trains, ``learndcg · fold 2`` / ``learndcg · fold 2 · seed 1`` (data set and ranker on hover, in its full
    label). Why the loss: a grid queues one job per loss and fold, and "Cancel #7 · fold 2" did not say which of
    the fold-2 jobs it stopped."""
    seed = f"seed {job.meta['seed']}" if job.meta.get("seed") else None
    return " · ".join(part for part in (job.meta.get("loss"), f"fold {job.meta['fold']}" if "fold" in job.meta
                                        else None, seed) if part)


def _mean_epoch_seconds(store: RunStore, run_ids: Sequence[str]) -> dict[str, float]:
    """Mean wall seconds per finished epoch (training + validation) of each run that has one."""
    series = store.epoch_series(list(run_ids), ["seconds"]) if run_ids else None
    if series is None or series.empty:
        return {}
    return {rid: float(v) for rid, v in series.groupby("run_id")["value"].mean().items()}


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min" if seconds >= 3600 else (
        f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s")


def _is_number(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))

