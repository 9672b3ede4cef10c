"""The typology job kind: ``python -m pipeline typology`` for one dataset and task, in the background.

Every model call is cached, so a rerun resumes; the job writes a progress record (the hard set, then
the run's stages) under its ``--progress-key``.
"""
from __future__ import annotations

import sys

from core.jobs import JobKind, register
from pipeline.typology.induction import InductionConfig

DEFAULT_MAX_ROUNDS = InductionConfig.max_rounds  # the Start form's default, as the command's


def typology_command(dataset: str, task: str, *, llm: str = "auto", max_rounds: int = DEFAULT_MAX_ROUNDS,
                     max_queries: int | None = None, typology: str | None = None,
                     progress_key: str | None = None) -> list[str]:
    command = [sys.executable, "-m", "pipeline", "typology", "--dataset", dataset, "--task", task, "--assigner", llm,
               "--max-rounds", str(max_rounds)]
    if max_queries:
        command += ["--max-queries", str(max_queries)]
    if typology:
        command += ["--typology", typology]
    if progress_key:
        command += ["--progress-key", progress_key]
    return command


TYPOLOGY = register(JobKind(
    name="typology", label="typology runs", command=typology_command,  # the name stored since the first typology job
    title=lambda dataset, task, **_: f"typology {task} on {dataset}",
    meta=lambda dataset, task, **_: {"dataset": dataset, "task": task},
    progress="progress_key", progress_prefix="typology"))
