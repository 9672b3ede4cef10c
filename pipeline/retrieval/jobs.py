"""The retrieval job kind: ``python -m pipeline retrieve`` over a data folder's passages, in the background.

The Hard to retrieve page starts it; its run appears among the page's retrievers once the job has
written it (run file and provenance ``.json``) to the cache.
"""
from __future__ import annotations

import sys
from pathlib import Path

from core.jobs import JobKind, register
from pipeline.retrieval import retrievers


def retrieve_command(dataset: str, retriever: str, folder: str | Path) -> list[str]:
    """The CLI run by the background job (``python -m pipeline retrieve``)."""
    if retriever not in retrievers.COMPUTABLE:
        raise ValueError(f"cannot compute retriever {retriever!r}; computable: {', '.join(retrievers.COMPUTABLE)}")
    return [sys.executable, "-m", "pipeline", "retrieve", "--dataset", dataset, "--retriever", retriever,
            "--data", str(folder)]


RETRIEVAL = register(JobKind(
    name="pipeline.retrieve", label="retrieval jobs", command=retrieve_command,
    title=lambda dataset, retriever, folder: f"retrieve {retriever} on {dataset} (partial corpus)",
    meta=lambda dataset, retriever, folder: {"dataset": dataset, "retriever": retriever, "data": str(folder)}))
