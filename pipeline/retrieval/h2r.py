"""Hard-to-retrieve (H2R) sets: each retriever run's per-query nDCG@10 over the dataset's judged queries,
and its hardest queries by the one rule of :mod:`pipeline.sets.rule` (:func:`hard_to_retrieve`,
:func:`h2r_report`).

Every retriever is scored over the same query set (the dataset's judged queries; a query missing
from a run scores 0, as ``trec_eval -c``), so the sets can be intersected.
"""
from __future__ import annotations

from typing import Mapping

from pipeline.sets.rule import DEFAULT_QUANTILE, HardSet, RULE, SetSummary, hard_set
from pipeline.sets.overlap import intersection


def hard_to_retrieve(per_query: Mapping[str, float], quantile: float = DEFAULT_QUANTILE,
                     retriever: str = "") -> HardSet:
    """The bottom ``quantile`` of a retriever's per-query values (the module's rule)."""
    return hard_set(per_query, quantile, retriever)


def h2r_report(data, runs, quantile: float = DEFAULT_QUANTILE, measure: str = "nDCG@10") -> dict:
    """H2R sets of several retriever runs on one dataset, as plain JSON-ready data.

    ``data`` is a :class:`pipeline.data.datasets.TrecDlData`, ``runs`` are
    :class:`pipeline.retrieval.retrievers.RetrieverRun`; every run is scored over the judged queries.
    """
    from pipeline.retrieval import evaluation

    qrels = data.require_qrels()
    names = [r.name for r in runs]
    if not runs:
        raise ValueError("no retrievers given")
    if len(set(names)) != len(names):
        raise ValueError(f"retriever names must be distinct, got {names}")
    retrievers, sets = {}, []
    for r in runs:
        values = evaluation.per_query(qrels, r.run, measure, complete=True)
        hard = hard_to_retrieve(values, quantile, r.name)
        sets.append(hard)
        retrievers[r.name] = {**r.as_dict(), "n_queries": hard.n_queries, "mean": hard.overall_mean,
                              "threshold": hard.threshold, "n_hard": len(hard.qids), "hard": list(hard.qids),
                              "hard_mean": hard.mean, "hard_set": SetSummary.of(hard).to_dict(), "per_query": values}
    return {"dataset": data.name, "measure": measure, "quantile": quantile, "rule": RULE.format(measure=measure),
            "source": data.source, "coverage": data.coverage.as_dict(), "retrievers": retrievers,
            "intersection": intersection(sets)}
