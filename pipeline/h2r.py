"""Hard-to-retrieve (H2R) query sets and their overlaps.

Rule: with per-query NDCG@10 values ``v_1..v_n`` of one retriever and a quantile ``q`` (0.25 by
default), the threshold is ``t = numpy.quantile(v, q)`` with numpy's default linear interpolation
(Hyndman & Fan type 7: the order statistic at 0-based position ``(n - 1) * q``, interpolated), and
the H2R set is ``{i : v_i <= t}``. Ties at the threshold are all included, so queries with equal
NDCG are never split arbitrarily; without ties the set has ``floor((n - 1) * q) + 1`` queries
(11 of DL19's 43 judged queries at q = 0.25).

Every retriever is scored over the same query set (the dataset's judged queries; a query missing
from a run scores 0, as ``trec_eval -c``), so the sets can be intersected.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Iterable, Mapping

import numpy as np

DEFAULT_QUANTILE = 0.25
RULE = "{measure} <= numpy.quantile(per-query {measure}, q) (linear interpolation); ties at the threshold included"


@dataclass(frozen=True)
class HardSet:
    retriever: str
    quantile: float
    threshold: float
    qids: tuple[str, ...]  # hardest first (ties by qid)
    mean: float  # mean measure value over the hard set
    n_queries: int  # queries scored
    overall_mean: float  # mean over all scored queries

    def as_dict(self) -> dict:
        out = asdict(self)
        out["qids"] = list(self.qids)
        out["n_hard"] = len(self.qids)
        return out


def hard_to_retrieve(per_query: Mapping[str, float], quantile: float = DEFAULT_QUANTILE,
                     retriever: str = "") -> HardSet:
    """The queries whose value falls at or below the ``quantile``-th quantile (see the module rule)."""
    return hard_set(per_query, quantile, retriever)


def hard_set(per_query: Mapping[str, float], quantile: float = DEFAULT_QUANTILE, name: str = "", *,
             top: bool = False) -> HardSet:
    """The module's rule for any task: the bottom ``quantile`` (value <= numpy.quantile(v, q)), or with
    ``top`` the top one (value >= numpy.quantile(v, 1 - q), hardest = highest first; H2J's
    disagreement). Ties at the threshold are included either way."""
    if not 0.0 < quantile <= 1.0:
        raise ValueError(f"quantile must be in (0, 1], got {quantile}")
    if not per_query:
        raise ValueError(f"{name or 'run'}: no scored queries")
    qids = np.array(list(per_query), dtype=object)
    values = np.fromiter(per_query.values(), dtype=np.float64, count=len(qids))
    if np.isnan(values).any():
        raise ValueError(f"{name or 'run'}: NaN per-query values (queries without judgments?)")
    if top:
        threshold = float(np.quantile(values, 1.0 - quantile))
        hard = values >= threshold
        order = np.lexsort((qids[hard].astype(str), -values[hard]))
    else:
        threshold = float(np.quantile(values, quantile))
        hard = values <= threshold
        order = np.lexsort((qids[hard].astype(str), values[hard]))
    return HardSet(retriever=name, quantile=quantile, threshold=threshold,
                   qids=tuple(qids[hard][order]), mean=float(values[hard].mean()),
                   n_queries=len(values), overall_mean=float(values.mean()))


def intersection(sets: Iterable[HardSet | Iterable[str]]) -> list[str]:
    """Queries in every set ("hard under all"), sorted by qid."""
    members = [set(s.qids if isinstance(s, HardSet) else s) for s in sets]
    if not members:
        return []
    return sorted(set.intersection(*members))


def overlap_regions(named_sets: Mapping[str, Iterable[str]]) -> dict[tuple[str, ...], list[str]]:
    """Exclusive Venn regions: ``{(names in, ...): qids in exactly those sets}`` (empty regions kept).

    For sets A, B: ``(A,)`` = A only, ``(B,)`` = B only, ``(A, B)`` = both.
    """
    names = list(named_sets)
    members = {name: set(named_sets[name]) for name in names}
    universe = set().union(*members.values()) if members else set()
    regions: dict[tuple[str, ...], list[str]] = {}
    for size in range(1, len(names) + 1):
        for combo in combinations(names, size):
            inside = set.intersection(*(members[n] for n in combo))
            outside = set().union(*(members[n] for n in names if n not in combo))
            regions[combo] = sorted((inside - outside) & universe)
    return regions


def h2r_report(data, runs, quantile: float = DEFAULT_QUANTILE, measure: str = "nDCG@10") -> dict:
    """H2R sets of several retriever runs on one dataset, as plain JSON-ready data.

    ``data`` is a :class:`pipeline.datasets.TrecDlData`, ``runs`` are
    :class:`pipeline.retrievers.RetrieverRun`; every run is scored over the judged queries.
    """
    from pipeline import evaluation

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
                              "hard_mean": hard.mean, "per_query": values}
    return {"dataset": data.name, "measure": measure, "quantile": quantile, "rule": RULE.format(measure=measure),
            "source": data.source, "coverage": data.coverage.as_dict(), "retrievers": retrievers,
            "intersection": intersection(sets)}
