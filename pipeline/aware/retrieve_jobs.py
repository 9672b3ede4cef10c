"""The difficulty-aware retrieval job kind: ``python -m pipeline aware-retrieve`` for one dataset, in the background.

Every rewrite goes through the response cache, so a rerun resumes; the job writes a progress record (the index
and the original queries' H2R, the reason assignment when made here, the rewrites, BM25/RM3 per arm:
``pipeline.cli.aware_retrieve.STAGES``) under its ``--progress-key``.
"""
from __future__ import annotations

import sys
from pathlib import Path

from core.jobs import JobKind, register
from pipeline.prompting.job_flags import optional_flags

# where the H2R queries' reasons come from (``--reasons``), as the Start form offers them
REASON_SOURCES = {"assign": "assigned here by the rewriter (the H2R queries of this BM25)",
                  "typology": "the failure typology's H2R runs of one model (the newest run's model)"}


def aware_retrieve_command(dataset: str, folder: str | Path | None, *, rewriter: str = "auto",
                           reasons: str = "assign", max_queries: int | None = None,
                           progress_key: str | None = None) -> list[str]:
    """The CLI an aware-retrieve job runs (``python -m pipeline aware-retrieve ... --json``)."""
    tail = optional_flags(reasons=reasons, sources=REASON_SOURCES, max_queries=max_queries, folder=folder,
                          progress_key=progress_key)  # checks reasons first
    if not rewriter.strip():
        raise ValueError("give a rewriter (an LLM spec, e.g. auto or ollama:llama3.2:3b)")
    return [sys.executable, "-m", "pipeline", "aware-retrieve", "--dataset", dataset, "--rewriter", rewriter.strip(),
            "--json"] + tail


AWARE_RETRIEVE = register(JobKind(
    name="pipeline.aware-retrieve", label="retrieval studies", command=aware_retrieve_command,
    title=lambda dataset, **_: f"difficulty-aware retrieval on {dataset}",
    meta=lambda dataset, **_: {"dataset": dataset},
    progress="progress_key", progress_prefix="aware-retrieve"))
