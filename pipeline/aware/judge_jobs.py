"""The difficulty-aware judging job kind: ``python -m pipeline aware-judge`` for one dataset, in the background.

Every call goes through the response cache, so a rerun resumes; the job writes a progress record (baseline
judgments, the reason assignment when made here, the two arms) under its ``--progress-key``.
"""
from __future__ import annotations

import sys
from pathlib import Path

from core.jobs import JobKind, register
from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.prompting.job_flags import optional_flags

# where the H2J queries' reasons come from (``--reasons``), as the Start form offers them
REASON_SOURCES = {"assign": "assigned here by the judge (the H2J queries)",
                  "typology": "the failure typology's H2J runs of one model (the newest run's model)"}


def aware_judge_command(dataset: str, folder: str | Path | None, *, judge: str = "auto", reasons: str = "assign",
                        max_queries: int | None = None, cap: int = DEFAULT_CAP,
                        progress_key: str | None = None) -> list[str]:
    """The CLI an aware-judge job runs (``python -m pipeline aware-judge ... --json``)."""
    tail = optional_flags(reasons=reasons, sources=REASON_SOURCES, max_queries=max_queries, folder=folder,
                          progress_key=progress_key)  # checks reasons first
    if not judge.strip():
        raise ValueError("give a judge (an LLM spec, e.g. auto or ollama:qwen3:8b)")
    command = [sys.executable, "-m", "pipeline", "aware-judge", "--dataset", dataset, "--judge", judge.strip(),
               "--cap", str(int(cap)), "--json"]
    return command + tail


AWARE_JUDGE = register(JobKind(
    name="pipeline.aware-judge", label="judging studies", command=aware_judge_command,
    title=lambda dataset, **_: f"difficulty-aware judging on {dataset}",
    meta=lambda dataset, **_: {"dataset": dataset},
    progress="progress_key", progress_prefix="aware-judge"))
