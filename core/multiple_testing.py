"""Multiple-testing corrections shared by both studies (the LearnDCG report's tables and the
failure study's predictor table), so there is one Holm."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def holm_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaN entries are left out of the family and stay NaN).

    Sorted ascending p_(1) <= ... <= p_(m): adj_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)).
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        order = ok[np.argsort(p[ok], kind="stable")]
        m = order.size
        adjusted = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(adjusted)
    return out
