"""Paired tests on discrete data, two-group and discordant-pair tests, and comparison families fixed in advance.

Discrete per-query values (a judge's disagreeing pairs out of the pairs it labelled, a hit or a miss) are
tested as what they are: integer counts or exact rationals (:class:`fractions.Fraction`), never as
``n/len`` floats whose equal changes differ in the last bit (2/3 - 1/3 and 1/3 - 0 are one tie in
Wilcoxon's ranks, but not as floats). :func:`exact` turns a value into a Fraction (an int or Fraction as it
is, a float by its exact binary value: a continuous measure such as nDCG@10 loses nothing either), every
difference is taken exactly, and the tests see only what they rank:

- :func:`wilcoxon`: the two-sided Wilcoxon signed-rank test (``scipy.stats.wilcoxon``), zero differences
  dropped (Wilcoxon's own treatment), run on each difference's sign times its dense rank among the exact
  absolute differences, so ties are exact and the statistic and p are those of the exact values;
- :func:`sign_test`: the exact two-sided sign test (``scipy.stats.binomtest``), ties dropped;
- :func:`two_groups`: is one group's mean larger than another's (the hard x arm interaction: per-query
  differences of hard queries against those of control queries)? A two-sided permutation test of the
  difference in means (``scipy.stats.permutation_test``): exact (every split) where the splits number at most
  :data:`EXACT_SPLITS`, else seeded resamples; exact rationals are scaled to integers first so equal
  statistics compare equal;
- :func:`discordant`: two paired yes/no outcomes (a query leaves the bottom quartile under arm A, under arm B)
  by the exact McNemar test, the binomial on the discordant pairs
  (``statsmodels.stats.contingency_tables.mcnemar``, ``exact=True``).

:func:`holm` adjusts a comparison family declared in advance (its names, in order) with
the project's one Holm (:func:`core.multiple_testing.holm_adjust`, equal to statsmodels' ``multipletests``): a
declared comparison that produced no p-value (no query changed) still counts in the family, with p = 1, so the
family never shrinks with the data; a name outside the declaration, or a declared one missing, is refused.
"""
from __future__ import annotations

import math
from fractions import Fraction
from numbers import Rational
from typing import Mapping, Sequence

import numpy as np

# a two-group permutation test enumerates every split up to this many (C(20, 10) = 184,756: two groups of 10)
EXACT_SPLITS = 200_000
RESAMPLES = 9_999
# the largest common denominator scaled to integers (int64 sums stay exact far beyond any study's n)
_MAX_SCALE = 10 ** 9


def exact(value) -> Fraction:
    """``value`` as an exact rational: an int or Fraction as it is, a float by its exact binary value."""
    if isinstance(value, bool):
        raise TypeError(f"expected a number, got {value!r}")
    if isinstance(value, (int, Rational)):
        return Fraction(value)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"expected a finite value, got {value!r}")
    return Fraction(number)


def differences(before: Sequence, after: Sequence) -> list[Fraction]:
    """``after - before`` per pair, exactly."""
    if len(before) != len(after):
        raise ValueError(f"paired values differ in length: {len(before)} before, {len(after)} after")
    return [exact(b) - exact(a) for a, b in zip(before, after)]


def signed_ranks(changes: Sequence[Fraction]) -> list[int]:
    """Each nonzero change's sign times the dense rank of its absolute value (1 = smallest): a Wilcoxon test
    on these equals the test on the exact changes (it reads only the ranks, and ties are exact here)."""
    magnitudes = sorted({abs(c) for c in changes if c != 0})
    rank = {m: i + 1 for i, m in enumerate(magnitudes)}
    return [(1 if c > 0 else -1) * rank[abs(c)] for c in changes if c != 0]


def wilcoxon(changes: Sequence) -> dict:
    """``{"statistic", "p", "method", "n_nonzero"}`` of the two-sided Wilcoxon signed-rank test on exact
    ``changes`` (module docstring); ``{"statistic": None, "p": None, "reason"}`` when none is nonzero. The
    method is scipy's choice, recorded: the exact distribution (n <= 50, no tied |change|), an exhaustive
    permutation distribution (tied |changes|, n <= 13: 2^n sign flips), else the normal approximation."""
    from scipy.stats import wilcoxon as scipy_wilcoxon

    ranked = signed_ranks([exact(c) for c in changes])
    if not ranked:
        return {"statistic": None, "p": None, "n_nonzero": 0, "method": None,
                "reason": "no query changed: the test has nothing to rank"}
    res = scipy_wilcoxon(np.asarray(ranked, dtype=float), alternative="two-sided", method="auto")
    ties = len({abs(r) for r in ranked}) < len(ranked)
    n = len(ranked)
    method = "exact" if n <= 50 and not ties else "exact permutation" if n <= 13 else "normal approximation"
    return {"statistic": float(res.statistic), "p": float(res.pvalue), "n_nonzero": n, "method": method}


def sign_test(improved: int, worsened: int) -> float | None:
    """The exact two-sided sign test of ``improved`` against ``worsened`` (ties dropped); None without either."""
    from scipy.stats import binomtest

    if improved + worsened == 0:
        return None
    return float(binomtest(improved, improved + worsened, 0.5, alternative="two-sided").pvalue)


def _as_integers(values: Sequence[Fraction]) -> np.ndarray:
    """Exact rationals scaled by their common denominator to int64 (equal sums stay equal); floats when the
    denominator is too large for that (a continuous measure)."""
    scale = 1
    for v in values:
        scale = math.lcm(scale, v.denominator)
        if scale > _MAX_SCALE:
            return np.array([float(v) for v in values])
    return np.array([int(v * scale) for v in values], dtype=np.int64)


def two_groups(first: Sequence, second: Sequence, *, seed: int = 0) -> dict:
    """Is the mean of ``first`` different from that of ``second`` (two-sided)? ``{"difference" (mean first -
    mean second, float), "p", "method", "n_first", "n_second", "splits"}``; ``p`` None (with ``reason``) when
    a group is empty or no split differs."""
    from scipy.stats import permutation_test

    a, b = [exact(v) for v in first], [exact(v) for v in second]
    out = {"n_first": len(a), "n_second": len(b), "difference": None, "p": None, "method": None,
           "splits": math.comb(len(a) + len(b), len(a)) if a and b else 0}
    if not a or not b:
        return out | {"reason": "a group has no query"}
    out["difference"] = float(sum(a) / len(a) - sum(b) / len(b))
    if len(a) < 2 or len(b) < 2:  # scipy's permutation test needs two per group, and one says little
        return out | {"reason": "a group has a single query"}
    if len(set(a + b)) == 1:
        return out | {"reason": "every value is the same: no split differs"}
    scaled = _as_integers(a + b)
    x, y = scaled[:len(a)], scaled[len(a):]
    exhaustive = out["splits"] <= EXACT_SPLITS
    # on integers, two splits with the same first-group sum give the very same float difference in means
    res = permutation_test((x, y), lambda u, v, axis: np.mean(u, axis=axis) - np.mean(v, axis=axis),
                           permutation_type="independent", alternative="two-sided", vectorized=True,
                           n_resamples=out["splits"] if exhaustive else RESAMPLES, random_state=seed)
    out["p"] = float(res.pvalue)
    out["method"] = ("exact permutation (every split)" if exhaustive
                     else f"permutation, {RESAMPLES} seeded resamples (seed {seed})")
    return out


def discordant(first: Sequence[bool], second: Sequence[bool]) -> dict:
    """Two paired yes/no outcomes: ``{"both", "first_only", "second_only", "neither", "p", "method"}``, ``p``
    the exact McNemar test (binomial on the discordant pairs), None without a discordant pair."""
    from statsmodels.stats.contingency_tables import mcnemar

    if len(first) != len(second):
        raise ValueError(f"paired outcomes differ in length: {len(first)} and {len(second)}")
    pairs = list(zip(map(bool, first), map(bool, second)))
    table = [[sum(f and s for f, s in pairs), sum(f and not s for f, s in pairs)],
             [sum(s and not f for f, s in pairs), sum(not f and not s for f, s in pairs)]]
    out = {"n": len(pairs), "both": table[0][0], "first_only": table[0][1], "second_only": table[1][0],
           "neither": table[1][1], "p": None, "method": "exact McNemar (binomial on the discordant pairs)"}
    if table[0][1] + table[1][0] == 0:
        return out | {"reason": "no discordant pair"}
    return out | {"p": float(mcnemar(table, exact=True).pvalue)}


def holm(family: Sequence[str], p_values: Mapping[str, float | None]) -> dict[str, float]:
    """``{name: Holm-adjusted p}`` over the ``family`` declared in advance (module docstring): every declared
    name counts, one without a p as p = 1."""
    from core.multiple_testing import holm_adjust

    names = list(family)
    if len(set(names)) != len(names):
        raise ValueError(f"a comparison family names a comparison twice: {names}")
    unknown = sorted(set(p_values) - set(names))
    missing = [n for n in names if n not in p_values]
    if unknown or missing:
        raise ValueError(f"the comparisons do not match the declared family {names}: "
                         + "; ".join(part for part in (f"undeclared: {unknown}" if unknown else "",
                                                       f"missing: {missing}" if missing else "") if part))
    raw = [1.0 if p_values[n] is None else float(p_values[n]) for n in names]
    adjusted = holm_adjust(raw)
    return {n: float(p) for n, p in zip(names, adjusted)}
