"""The one rule of every task's hard set (H2R, H2G, H2J): :func:`hard_set` and its result :class:`HardSet`.

The rule (:func:`hard_set`), for per-query values ``v_1..v_n`` and a quantile ``q`` (0.25 by
default), hardest = lowest (H2R's nDCG@10, H2G's BERTScore F1) or, with ``top``, highest (H2J's
disagreement):

1. The *target size* is ``m = floor((n - 1) q) + 1``: the size of the set ``{v <= numpy.quantile(v, q)}``
   (numpy's default linear interpolation, Hyndman & Fan type 7) when no two values tie, e.g. 11 of
   DL19's 43 judged queries and 14 of DL20's 54 at q = 0.25. ``threshold`` is that quantile
   (``numpy.quantile(v, 1 - q)`` for ``top``), reported as before.
2. The *tie block* is every query whose value equals the m-th hardest value. A set never splits it:
   queries with the same value are either all hard or all not (membership never depends on a qid).
3. If the block ends exactly at position m, the set is the m hardest queries. Otherwise the block
   straddles the target and *ties decide membership*: the set is the ``b`` strictly harder queries,
   or those plus the whole block (``b + t``), whichever size is closer to m; on equal distance the
   smaller set (a set never grows past its quantile on a coin flip).

Why this rule: the earlier rule ("value <= quantile, ties included") is the same as step 3 always
taking the block. With few distinct values -- a judge capped at 4 or 20 pairs per query gives
disagreement shares in steps of 1/4 or 1/20 -- the block holds most queries, and "top quartile" became
19 or 28 of DL19's 43 queries (every query when most shares are 0). A researcher expects "the hardest
quarter" to be about a quarter; a tie-break by a secondary key or by qid would make membership depend
on something other than the measured value. Keeping the block whole and choosing the size closer to
q's share keeps both properties; the price is a set that can be smaller than m (down to empty when the
hardest value alone is shared by more than 2m queries), which is reported, never hidden: every
:class:`HardSet` carries the threshold, the tie block (value, size, included or not), the target m
and |set| / n, and :meth:`HardSet.warning` says when ties decided membership. Without ties the set is
exactly what the earlier rule gave.

Imports numpy only: every stage (retrieval, generation, judging) and the study use it.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Mapping

import numpy as np


DEFAULT_QUANTILE = 0.25
RULE = ("the hardest floor((n-1)q)+1 queries by {measure} (the size of {measure} <= numpy.quantile(v, q), linear "
        "interpolation, without ties); queries tied at the boundary value are never split: the whole tie block "
        "is in or out, whichever keeps the set's size closer to that target (equal distance: out)")


@dataclass(frozen=True)
class HardSet:
    retriever: str  # the set's name (a retriever, or a task)
    quantile: float
    threshold: float  # numpy.quantile(v, q) (bottom) or numpy.quantile(v, 1 - q) (top)
    qids: tuple[str, ...]  # hardest first (ties by qid)
    mean: float | None  # mean value over the hard set (None when it is empty)
    n_queries: int  # queries scored (N)
    overall_mean: float  # mean over all scored queries
    n_target: int = 0  # floor((N - 1) q) + 1: the set's size without ties
    tie_value: float | None = None  # the m-th hardest value
    tie_block: int = 0  # queries whose value is tie_value
    tie_included: bool = True  # whether that block is in the set
    ties_decide: bool = False  # the block straddles the target: the tie rule chose in or out
    top: bool = False  # hardest = highest

    @property
    def share(self) -> float:
        """|set| / N."""
        return len(self.qids) / self.n_queries if self.n_queries else 0.0

    def warning(self) -> str | None:
        """One line when ties decided membership (or the set is empty), else None."""
        if not self.ties_decide:
            return None
        what = f"{self.retriever}: " if self.retriever else ""
        verb = "included" if self.tie_included else "left out"
        return (f"{what}{self.tie_block} queries tie at {self.tie_value:.4g} across the quantile's target of "
                f"{self.n_target}; the whole block was {verb}, so the set has {len(self.qids)} of {self.n_queries} "
                f"queries ({self.share:.0%}, target {self.n_target / self.n_queries:.0%})"
                + ("; no query is distinguishably harder than the rest" if not self.qids else ""))

    def as_dict(self) -> dict:
        out = asdict(self)
        out["qids"] = list(self.qids)
        out["n_hard"] = len(self.qids)
        out["share"] = self.share
        out["warning"] = self.warning()
        return out


def target_size(n: int, quantile: float) -> int:
    """``floor((n - 1) q) + 1``: the size of numpy's quantile set when no values tie."""
    return min(n, math.floor((n - 1) * quantile + 1e-9) + 1)


def hard_set(per_query: Mapping[str, float], quantile: float = DEFAULT_QUANTILE, name: str = "", *,
             top: bool = False) -> HardSet:
    """The module's rule for any task: the bottom ``quantile`` (lowest values hardest), or with ``top``
    the top one (highest hardest; H2J's disagreement). Ties are never split (module docstring)."""
    if not 0.0 < quantile <= 1.0:
        raise ValueError(f"quantile must be in (0, 1], got {quantile}")
    if not per_query:
        raise ValueError(f"{name or 'run'}: no scored queries")
    qids = np.array(list(per_query), dtype=object)
    values = np.fromiter(per_query.values(), dtype=np.float64, count=len(qids))
    if np.isnan(values).any():
        raise ValueError(f"{name or 'run'}: NaN per-query values (queries without judgments?)")
    n = len(values)
    threshold = float(np.quantile(values, 1.0 - quantile if top else quantile))
    hardness = -values if top else values  # lower = harder
    order = np.lexsort((qids.astype(str), hardness))
    m = target_size(n, quantile)
    boundary = hardness[order[m - 1]]
    before = int((hardness < boundary).sum())
    block = int((hardness == boundary).sum())
    ties_decide = before + block > m
    include = not ties_decide or (before + block - m) < (m - before)
    size = before + block if include else before
    chosen = order[:size]
    return HardSet(retriever=name, quantile=quantile, threshold=threshold, qids=tuple(qids[chosen]),
                   mean=float(values[chosen].mean()) if size else None, n_queries=n,
                   overall_mean=float(values.mean()), n_target=m, tie_value=float(values[order[m - 1]]),
                   tie_block=block, tie_included=include, ties_decide=ties_decide, top=top)


@dataclass(frozen=True)
class SetSummary:
    """How the rule drew one hard set, as results store and show it beside the set's queries: the
    result type of every hard set (H2R, H2G, H2J; over all queries or over a configuration's universe).

    JSON form (:meth:`to_dict`, :meth:`from_dict`): the ten keys below, exactly as stored in study
    files and printed by the CLI. Fields are kept as stored (``share`` and ``warning`` are not
    recomputed on reading), so a result reads back as it was written."""
    n_hard: int  # |set|
    n_queries: int  # N: queries scored
    share: float  # |set| / N
    threshold: float  # numpy's quantile of the values (HardSet.threshold)
    n_target: int  # floor((N - 1) q) + 1
    tie_value: float | None  # the m-th hardest value
    tie_block: int  # queries whose value is tie_value
    tie_included: bool
    ties_decide: bool  # the block straddled the target: the tie rule chose in or out
    warning: str | None  # HardSet.warning(): one line when ties decided membership

    @classmethod
    def of(cls, hard: HardSet) -> SetSummary:
        return cls(n_hard=len(hard.qids), n_queries=hard.n_queries, share=hard.share, threshold=hard.threshold,
                   n_target=hard.n_target, tie_value=hard.tie_value, tie_block=hard.tie_block,
                   tie_included=hard.tie_included, ties_decide=hard.ties_decide, warning=hard.warning())

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> SetSummary:
        return cls(**{f.name: data[f.name] for f in fields(cls)})

    def line(self) -> str:
        """``11 of 43 queries (26%); threshold 0.3761, target 11, tie block of 1 at 0.3727`` (``(left out)`` /
        ``(included)`` where ties decided): the CLI's and pages' line."""
        decided = "" if not self.ties_decide else (" (included)" if self.tie_included else " (left out)")
        return (f"{self.n_hard} of {self.n_queries} queries ({self.share:.0%}); threshold {self.threshold:.4g}, "
                f"target {self.n_target}, tie block of {self.tie_block} at {self.tie_value:.4g}{decided}")
