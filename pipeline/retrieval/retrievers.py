"""Retrievers as the study sees them: a run per (dataset, retriever) plus where it came from.

A run is either *imported* (a TREC run file: those in the data folder's ``runs/`` are real
full-corpus runs) or *computed here* by BM25 or a dense model over the passages of the data folder,
which is a partial corpus. :attr:`RetrieverRun.provenance` says which, in words, for the CLI JSON
and the dashboard.

Computed runs are written under ``cache/runs/trec_dl/<dataset>/`` keyed by the passages, the queries
and the settings, so asking again is free.

Names (CLI ``--retriever`` and the dashboard): ``bm25`` is the data folder's imported full-corpus run
``runs/run.bm25.<dataset>.txt``; ``bm25@computed`` is the run computed here over the folder's
passages (a partial corpus). A bare computable name with no imported run falls back to computing
it, and the result is then named ``NAME@computed``, so a report never shows a partial-corpus run
under a bare name.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from core.atomic import atomic_write_text
from core import paths
from core.digest import content_digest
from core.threads import encoder_choice
from pipeline.retrieval.errors import RetrievalError
from pipeline.data.trec_io import Run

COMPUTABLE = ("bm25", "dense", "tasb", "minilm")  # dense = TAS-B when loadable, else MiniLM
COMPUTED_SUFFIX = "@computed"  # bm25@computed: computed here over the partial corpus


def computed_name(retriever: str) -> str:
    return f"{retriever}{COMPUTED_SUFFIX}"


@dataclass
class RetrieverRun:
    name: str
    dataset: str
    kind: str  # "imported" | "computed"
    provenance: str
    path: Path
    run: Run = field(repr=False)
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"name": self.name, "dataset": self.dataset, "kind": self.kind, "provenance": self.provenance,
                "path": str(self.path), **self.details}


def run_summary(data, result: RetrieverRun) -> dict:
    """A run's size (queries, queries with at least one hit, depth) and, when ``data`` has qrels, its
    mean nDCG@10 over the judged queries (missing ones score 0); ``None`` and 0 without qrels."""
    from pipeline.retrieval import evaluation

    summary = {"n_queries": len(result.run), "n_queries_with_hits": sum(1 for r in result.run.values() if r),
               "depth": result.details["settings"]["depth"], "mean_nDCG@10": None, "n_judged_queries": 0}
    if data.has_qrels:
        values = evaluation.per_query(data.qrels, result.run, "nDCG@10", complete=True)
        summary.update({"mean_nDCG@10": evaluation.mean(values), "n_judged_queries": len(values)})
    return summary


def imported_run(data, name: str, path: str | Path, *, from_data_folder: bool = False) -> RetrieverRun:
    """A run read from a file. A run that :func:`compute_run` wrote keeps its provenance (from the
    ``.json`` beside it); the data folder's ``runs/`` hold full-corpus runs (its layout's contract)."""
    path = Path(path)
    run = data.load_run(path)
    meta = _read_meta(path.with_suffix(".json"))
    if not from_data_folder and meta.get("dataset") == data.name and "provenance" in meta:
        # a run compute_run wrote is a partial-corpus run whatever the user called it
        name = name if COMPUTED_SUFFIX in name else computed_name(name)
        return RetrieverRun(name=name, dataset=data.name, kind="computed", provenance=meta["provenance"],
                            path=path, run=run, details={k: meta[k] for k in ("n_passages", "settings") if k in meta})
    what = "imported full-corpus run" if from_data_folder else "imported run"
    return RetrieverRun(name=name, dataset=data.name, kind="imported", provenance=f"{what} ({path})",
                        path=path, run=run)


def _read_meta(path: Path) -> dict:
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _run_key(data, retriever: str, settings: dict) -> str:
    return content_digest({"passages": data.passages_fingerprint, "queries": data.queries(),
                           "retriever": retriever, "settings": settings}, 16)


def compute_run(data, retriever: str, *, depth: int = 1000, k1: float = 0.9, b: float = 0.4,
                threads: int = 2, progress: bool = True) -> RetrieverRun:
    """Run ``bm25`` or a dense model (``dense`` = auto, ``tasb``, ``minilm``) over ``data``'s passages.

    Queries are the judged topics (all topics when the dataset has no qrels).
    """
    from pipeline.data import trec_io

    if retriever not in COMPUTABLE:
        raise RetrievalError(f"cannot compute retriever {retriever!r}; computable: {', '.join(COMPUTABLE)}")
    if not data.passages:
        raise RetrievalError(f"{data.name}: no passages with text in {data.source}; nothing to index")
    queries = data.queries()
    n = len(data.passages)
    if retriever == "bm25":
        settings = {"k1": k1, "b": b, "depth": depth}
        description = f"BM25 (pyserini/Anserini, k1={k1:g}, b={b:g})"
    else:
        from pipeline.retrieval import dense

        model = "auto" if retriever == "dense" else retriever
        spec = dense.resolve_model(model)  # resolve auto now: the cache key names the model used
        settings = {"model": spec.key, "depth": depth}
        description = spec.description
    folder = paths.cache_subdir("runs", "trec_dl", data.name)
    path = folder / f"{retriever}-{_run_key(data, retriever, settings)}.txt"
    meta_path = path.with_suffix(".json")
    provenance = f"computed here over a partial corpus ({n:,} passages): {description}"
    if not (path.is_file() and meta_path.is_file()):
        if retriever == "bm25":
            from pipeline.retrieval import bm25

            index = bm25.build_index(data.passages, fingerprint=data.passages_fingerprint, threads=threads)
            run = bm25.search(index, queries, bm25.BM25Settings(k1=k1, b=b, depth=depth), threads=threads,
                              progress=progress)
        else:
            run = dense.search(data.passages, queries, settings["model"], depth=depth,
                               fingerprint=data.passages_fingerprint, progress=progress)
        trec_io.write_run(run, path, tag=f"irdash-{retriever}")
        # the CPU threads it ran on (not part of the result: a rerun on other threads reads this file)
        ran_on = {"threads": threads} if retriever == "bm25" else encoder_choice().as_dict()
        atomic_write_text(meta_path, json.dumps({"dataset": data.name, "retriever": retriever,
                                                 "provenance": provenance, "n_passages": n,
                                                 "n_queries": len(queries), "settings": settings,
                                                 "threads": ran_on}, indent=1))
    run = data.load_run(path)
    # queries without a single hit have no line in the file; keep them visible as empty rankings
    for qid in queries:
        run.setdefault(qid, {})
    return RetrieverRun(name=computed_name(retriever), dataset=data.name, kind="computed", provenance=provenance,
                        path=path, run=run, details={"n_passages": n, "settings": settings})


def get_run(data, name: str, run_file: str | Path | None = None, **compute_options) -> RetrieverRun:
    """``NAME[=RUNFILE]``: the given file; ``NAME@computed``: computed here over the data folder's
    passages; bare ``NAME``: the data folder's ``runs/run.NAME.<dataset>.txt`` (full corpus), else, for
    a computable name, computed here (and then named ``NAME@computed``)."""
    if run_file is not None:
        return imported_run(data, name, run_file)
    base, computed, _ = name.partition(COMPUTED_SUFFIX)
    if computed:
        if _ or base not in COMPUTABLE:
            raise RetrievalError(f"{name!r}: only {', '.join(computed_name(r) for r in COMPUTABLE)} can be computed")
        return compute_run(data, base, **compute_options)
    found = data.imported_runs().get(name)
    if found is not None:
        return imported_run(data, name, found, from_data_folder=True)
    if name in COMPUTABLE:
        return compute_run(data, name, **compute_options)
    known = sorted(set(data.imported_runs()) | set(COMPUTABLE) | {computed_name(r) for r in COMPUTABLE})
    raise RetrievalError(f"{data.name}: no run for retriever {name!r} (imported runs: "
                         f"{', '.join(sorted(data.imported_runs())) or 'none'}; known names: {', '.join(known)}); "
                         f"pass NAME=RUNFILE to import one")
