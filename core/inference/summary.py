"""An estimate read from a summary rather than from its values (issue 40: the inference core's estimates,
:mod:`core.inference.claims`, take the values): a stored LearnDCG result keeps each comparison's ``diff@k``,
``sd_diff@k`` and ``pairs@k``, not the per-query differences, and its claims are decided afresh from those.

Student-t through ``scipy.special`` (``stdtr``/``stdtrit``) rather than ``scipy.stats``, whose import (about a
second) the Results page's first render must not pay (``tests/ltr/test_report.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special


@dataclass(frozen=True)
class PairedT:
    """The mean paired difference from its summary (``value`` the mean, ``sd`` the differences' sample SD, ``n``
    the pairs), read as the paired t-test reads it: Student-t one-sided bounds and tests (``Mean`` of values, in
    ``core.inference.claims``, reads through it; both checked against statsmodels). What the findings' claims read
    from a table's ``diff@k``, ``sd_diff@k`` and ``pairs@k`` (a stored result keeps those, not the per-query values)."""
    value: float
    sd: float
    n: int
    unit: str = "paired queries"
    name: str = "paired t"

    @property
    def _se(self) -> float:
        return self.sd / np.sqrt(self.n)

    def bounds(self, level: float) -> tuple[float, float]:
        if self.n < 2:
            return -np.inf, np.inf
        if self.sd == 0:
            return self.value, self.value
        half = float(special.stdtrit(self.n - 1, level)) * self._se
        return self.value - half, self.value + half

    def _p(self, x: float, above: bool) -> float:
        if self.n < 2:
            return 1.0
        if self.sd == 0:
            return 0.0 if (self.value > x if above else self.value < x) else 1.0
        t = (self.value - x) / self._se
        return float(special.stdtr(self.n - 1, -t if above else t))

    def p_above(self, x: float) -> float:
        return self._p(x, True)

    def p_below(self, x: float) -> float:
        return self._p(x, False)

    def sd_at(self, x: float) -> float:
        return self.sd

    def figures(self, scale: str = "percent") -> str:
        from core.inference.claims import fmt

        return f"mean {fmt(self.value, scale)}"
