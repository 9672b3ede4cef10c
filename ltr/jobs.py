"""The training job kind: one fold's run (``python -m ltr train``), in the background.

A job runs in a trainer host (``python -m ltr worker``) that stays up between jobs, so torch is
imported and the fold read once; its ``command`` is the same run as a process of its own. With the
``ray`` executor the job is instead a light local driver (``python -m ltr train --executor ray``) that
runs the fold as a Ray task and holds the Ray connection while it runs (no host).

Its progress is the run's own (epochs done of total, in the run store): the job keeps the run's id
(``meta["run_ids"]``) and writes no progress record of its own.
"""
from __future__ import annotations

import dataclasses
import sys

from core.jobs import JobKind, register


def train_command(config, executor: str = "local") -> list[str]:
    """``config``: an :class:`ltr.train.RunConfig`."""
    return [sys.executable, "-m", "ltr", "train", *config.to_cli_args(), *(["--executor", "ray"] if executor == "ray"
                                                                          else [])]


def train_title(config, executor: str = "local") -> str:
    label = f"{config.data} · fold {config.fold} · {config.loss} · {config.model} · seed {config.seed}"
    return f"{label} · ray" if executor == "ray" else label


def train_meta(config, executor: str = "local") -> dict:
    meta = {"run_ids": [config.run_id], "data": config.data, "fold": config.fold, "loss": config.loss,
            "model": config.model, "seed": config.seed}
    if executor == "ray":
        return meta | {"executor": "ray"}
    from ltr.train.host import host_command  # imports torch: only when a job is queued

    return meta | {"host": host_command(), "host_request": {"config": dataclasses.asdict(config)}}


TRAINING = register(JobKind(name="ltr.train", label="training jobs", command=train_command, title=train_title,
                            meta=train_meta))
