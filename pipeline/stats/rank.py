"""Rank agreement of two systems' per-query values: Kendall's τ and rank-biased overlap (RBO).

Both compare two scorings of the same queries (e.g. BM25's and TAS-B's nDCG@10, or one judge's binary
and graded disagreement). Only the queries both scored are compared (``common``).

- Kendall's τ-b (``scipy.stats.kendalltau``) of the two value lists: agreement of the whole order,
  ties handled by τ-b; with its two-sided p-value.
- RBO (Webber, Moffat & Zobel 2010, "A similarity measure for indefinite rankings", eq. 32, the
  extrapolated RBO_ext) of the two rankings *hardest first*: top-weighted, so agreement on the hardest
  queries -- the ones a hard set is drawn from -- counts most. With persistence ``p`` the first ``d``
  ranks carry ``1 - p^(d-1)`` of the weight (p = 0.9: the top 10 carry about 65%). For two
  rankings of the same n items, ``RBO_ext = (X_n/n) p^n + (1-p)/p Σ_{d=1..n} (X_d/d) p^d`` with X_d the
  overlap of the two top-d prefixes (X_n = n, so identical rankings give 1). Written here (a dozen
  lines): no maintained RBO package is installed.

A ranking sorts by value, hardest first (``descending`` for values where higher is harder, like H2J's
disagreement), ties broken by qid so the ranking is deterministic.
"""
from __future__ import annotations

from typing import Mapping, Sequence

DEFAULT_PERSISTENCE = 0.9


def ranking(values: Mapping[str, float], *, descending: bool) -> list[str]:
    """The qids hardest first (see the module docstring), ties by qid."""
    sign = -1.0 if descending else 1.0
    return sorted(values, key=lambda q: (sign * float(values[q]), q))


def rbo(first: Sequence[str], second: Sequence[str], p: float = DEFAULT_PERSISTENCE) -> float:
    """Extrapolated rank-biased overlap of two rankings of the same items (module docstring)."""
    if not 0 < p < 1:
        raise ValueError(f"rbo: persistence p must be in (0, 1), got {p}")
    if sorted(first) != sorted(second):
        raise ValueError("rbo: the two rankings must hold the same items (compare over the common queries)")
    n = len(first)
    if n == 0:
        raise ValueError("rbo: empty rankings")
    seen_a, seen_b, overlap, total = set(), set(), 0, 0.0
    for d, (a, b) in enumerate(zip(first, second), start=1):
        overlap += (a in seen_b) + (b in seen_a) + (a == b)
        seen_a.add(a)
        seen_b.add(b)
        total += overlap / d * p ** d
    return float(overlap / n * p ** n + (1 - p) / p * total)


def rank_agreement(a: Mapping[str, float], b: Mapping[str, float], *, descending: bool,
                   p: float = DEFAULT_PERSISTENCE) -> dict:
    """Kendall τ-b (with p-value) and RBO of two scorings over the queries both scored:
    ``{n, kendall_tau, kendall_p, rbo, rbo_p}``; τ is None (with ``reason``) under three common queries
    or when one side is constant."""
    from scipy.stats import kendalltau

    common = sorted(set(a) & set(b))
    out = {"n": len(common), "rbo_p": p, "kendall_tau": None, "kendall_p": None, "rbo": None}
    if len(common) < 3:
        return {**out, "reason": f"{len(common)} queries scored by both (at least 3 needed)"}
    x, y = [float(a[q]) for q in common], [float(b[q]) for q in common]
    out["rbo"] = rbo(ranking({q: a[q] for q in common}, descending=descending),
                     ranking({q: b[q] for q in common}, descending=descending), p)
    if len(set(x)) < 2 or len(set(y)) < 2:
        return {**out, "reason": "one scoring gives every common query the same value: τ is undefined"}
    result = kendalltau(x, y)
    return {**out, "kendall_tau": float(result.statistic), "kendall_p": float(result.pvalue)}
