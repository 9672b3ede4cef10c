"""The difference of two shares measured on the same units (a paired 2x2 table), as an estimate the claim
types read (:mod:`core.inference.claims`'s ``Estimate``): Newcombe's hybrid score interval for paired
proportions (method 10 of Newcombe, R. G. 1998, "Improved confidence intervals for the difference between
binomial proportions based on paired data", Statistics in Medicine 17: 2635-2650; Fagerland, Lydersen & Laake
2017, *Statistical Analysis of Contingency Tables*, ch. 8, "Newcombe square-and-add").

Why not a t interval on the per-unit changes (-1, 0, 1): when no unit moves, their sd is 0 and the t interval
is [+0, +0], certainty that 43 queries cannot give. Newcombe's interval combines each share's Wilson score
interval (statsmodels ``proportion_confint``) with the correlation of the two memberships (phi, with its
continuity correction), so a change of nothing over n units is bounded by what n units can show.

statsmodels has no paired difference-of-proportions interval (its ``confint_proportions_2indep`` is for
independent samples), so the method is written here; its p-values invert the interval (the level at which a
one-sided bound reaches the tested value), so a bound excludes a value exactly when its test rejects it.

API: ``PairedShares(both, first_only, second_only, neither)`` with ``value`` (second share minus first),
``n``, ``unit``, ``name``, ``bounds(level)`` (one-sided bounds at ``level``), ``p_above(x)``, ``p_below(x)``,
``sd_at(x)``, ``figures(scale)``; ``PairedShares.of(first, second)`` from two 0/1 membership lists.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from scipy.optimize import brentq
from statsmodels.stats.proportion import proportion_confint

_TOP = 1 - 1e-12  # the highest level a p-value is searched at (p under 1e-12 reads 0)


@dataclass(frozen=True)
class PairedShares:
    """Units in both memberships, only the first, only the second, in neither; ``value`` is the second share
    minus the first (module docstring)."""
    both: int
    first_only: int
    second_only: int
    neither: int
    unit: str = "units"
    name: str = "Newcombe paired score"

    @classmethod
    def of(cls, first: Sequence[int], second: Sequence[int], unit: str = "units") -> "PairedShares":
        if len(first) != len(second):
            raise ValueError(f"paired memberships of different lengths ({len(first)} and {len(second)})")
        pairs = list(zip(map(bool, first), map(bool, second)))
        return cls(pairs.count((True, True)), pairs.count((True, False)), pairs.count((False, True)),
                   pairs.count((False, False)), unit)

    @property
    def n(self) -> int:
        return self.both + self.first_only + self.second_only + self.neither

    @property
    def value(self) -> float:
        return (self.second_only - self.first_only) / self.n if self.n else math.nan

    def _phi(self) -> float:
        """The memberships' correlation with Newcombe's continuity correction: ``ad - bc`` less n/2 when
        over n/2, 0 between 0 and n/2, as it is when negative; 0 when a margin is empty."""
        a, b, c, d, n = self.both, self.first_only, self.second_only, self.neither, self.n
        margins = (a + b) * (c + d) * (a + c) * (b + d)
        if not margins:
            return 0.0
        cross = a * d - b * c
        cross = cross - n / 2 if cross > n / 2 else 0.0 if cross >= 0 else cross
        return cross / math.sqrt(margins)

    def _interval(self, level: float) -> tuple[float, float]:
        """The two one-sided bounds at ``level`` (a two-sided ``2 level - 1`` interval)."""
        n = self.n
        p1, p2 = (self.both + self.first_only) / n, (self.both + self.second_only) / n
        alpha = 2 * (1 - level)
        l1, u1 = proportion_confint(self.both + self.first_only, n, alpha=alpha, method="wilson")
        l2, u2 = proportion_confint(self.both + self.second_only, n, alpha=alpha, method="wilson")
        phi, d = self._phi(), p2 - p1
        down = math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
        up = math.sqrt(max((u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2, 0.0))
        return max(-1.0, d - down), min(1.0, d + up)

    def bounds(self, level: float) -> tuple[float, float]:
        if not self.n:
            return -1.0, 1.0
        return self._interval(level)

    def _p(self, x: float, side: int) -> float:
        """The p-value of "value > x" (side 0: the lower bound's) or "value < x" (side 1): one minus the
        level at which that one-sided bound reaches ``x`` (at level 0.5 both bounds are the estimate)."""
        if not self.n:
            return 1.0
        beyond = self.value - x if side == 0 else x - self.value
        if beyond < 0:  # the estimate lies on the other side: the complement of the other test
            return 1.0 - self._p(x, 1 - side)
        if beyond == 0:
            return 0.5
        past = (lambda level: self._interval(level)[0] - x) if side == 0 else (lambda level: x - self._interval(level)[1])
        if past(_TOP) > 0:
            return 0.0
        return 1.0 - brentq(past, 0.5, _TOP, xtol=1e-13)

    def p_above(self, x: float) -> float:
        return self._p(x, 0)

    def p_below(self, x: float) -> float:
        return self._p(x, 1)

    def sd_at(self, x: float) -> float:
        """One unit's sd of the change (-1, 0, 1) were the difference ``x``, with at least ``|x|`` of the units
        moving: what the power of a test at another n reads."""
        if not self.n:
            return 0.0
        moving = max((self.first_only + self.second_only) / self.n, abs(x))
        return math.sqrt(max(moving - x * x, 0.0))

    def figures(self, scale: str = "percent") -> str:
        return f"{self.second_only} in, {self.first_only} out of {self.n}"
