"""The difficulty-aware generation job kind: ``python -m pipeline prefer`` for one dataset, in the background.

The job writes a progress record (assigning reasons, baseline answers, difficulty-aware answers,
judging) under its ``--progress-key``.
"""
from __future__ import annotations

import sys
from pathlib import Path

from core.jobs import JobKind, register
from pipeline.prompting.job_flags import optional_flags

# where a comparison's failure reasons come from (``--reasons``), as the form offers them
REASON_SOURCES = {"assign": "assigned here by the judge (H2R queries of BM25)",
                  "typology": "the failure typology's runs of one model (the newest run's model)"}


def prefer_command(dataset: str, folder: str | Path | None, *, generator: str = "auto", judge: str = "auto",
                   reasons: str = "assign", max_queries: int | None = None,
                   allow_self_judging: bool = False, progress_key: str | None = None) -> list[str]:
    """The CLI a preference job runs (``python -m pipeline prefer``), like the other failure pages' jobs.
    The same spec for generator and judge is refused here unless ``allow_self_judging`` (the CLI checks the
    resolved models too, and a result made that way says so)."""
    tail = optional_flags(reasons=reasons, sources=REASON_SOURCES, max_queries=max_queries, folder=folder,
                          progress_key=progress_key)  # checks reasons first
    if not generator.strip() or not judge.strip():
        raise ValueError("give a generator and a judge (LLM specs, e.g. auto or ollama:llama3.2:3b)")
    command = [sys.executable, "-m", "pipeline", "prefer", "--dataset", dataset, "--generator", generator.strip(),
               "--judge", judge.strip()]
    if generator.strip() == judge.strip() and not allow_self_judging:
        raise ValueError(f"the judge {judge.strip()!r} would judge its own answers: choose another judge, or allow "
                         "self-judging (the result then says so)")
    if allow_self_judging:
        command.append("--allow-self-judging")
    return command + tail


PREFERENCE = register(JobKind(
    name="pipeline.prefer", label="comparisons", command=prefer_command,
    title=lambda dataset, **_: f"difficulty-aware generation on {dataset}",
    meta=lambda dataset, **_: {"dataset": dataset},
    progress="progress_key", progress_prefix="prefer"))
