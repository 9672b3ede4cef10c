"""The prediction job kind: ``python -m pipeline predict`` in the background, started from the
Predicting failure page; its result is stored (:mod:`pipeline.predict.store`) and appears on the page
once the job has finished."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from core.jobs import JobKind, register

SETUPS = ("binary", "graded")


def predict_command(datasets: Sequence[str], retrievers: Sequence[str], judges: Sequence[str] = (),
                    setups: Sequence[str] = ("binary",), folder: str | Path | None = None, generators: Sequence[str] = (),
                    encoder: str | None = None) -> list[str]:
    """The CLI the job runs; a bad choice raises before anything is queued. ``generators``: the data folder's
    imported answers (their H2G targets, with a stored h2g-samples result's ceiling); ``encoder``: BERTScore's."""
    from pipeline.data.datasets import DATASETS

    if not datasets:
        raise ValueError("choose at least one dataset")
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        raise ValueError(f"unknown dataset {unknown[0]!r}; known: {', '.join(DATASETS)}")
    if not retrievers and not judges and not generators:
        raise ValueError("choose at least one retriever, judge or generator")
    from pipeline.generation.bertscore import ENCODERS

    if encoder not in (None, *ENCODERS):
        raise ValueError(f"encoder must be one of {', '.join(ENCODERS)}, got {encoder!r}")
    if any(s not in SETUPS for s in setups) or not setups:
        raise ValueError(f"setups must be among {', '.join(SETUPS)}, got {list(setups)}")
    argv = [sys.executable, "-m", "pipeline", "predict"]
    for flag, values in (("--dataset", datasets), ("--retriever", retrievers), ("--generator", generators),
                         ("--judge", judges), ("--setup", setups)):
        for value in values:
            argv += [flag, value]
    argv += ["--encoder", encoder] if encoder and generators else []
    return argv + (["--data", str(folder)] if folder else [])


def predict_title(datasets, retrievers, judges=(), setups=("binary",), folder=None, generators=(), encoder=None) -> str:
    parts = [", ".join(retrievers), "generators " + ", ".join(generators) if generators else "",
             "judges " + ", ".join(judges) if judges else ""]
    return f"predict on {'+'.join(datasets)} ({'; '.join(p for p in parts if p)}; {'/'.join(setups)})"


PREDICTION = register(JobKind(
    name="pipeline.predict", label="prediction jobs", command=predict_command, title=predict_title,
    meta=lambda datasets, retrievers, judges=(), setups=("binary",), folder=None, generators=(), encoder=None: {
        "datasets": list(datasets), "retrievers": list(retrievers), "judges": list(judges),
        "generators": list(generators)},
    link=lambda job: "/predicting-failure" if job.status == "completed" else None))
