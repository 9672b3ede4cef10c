"""Multiple-testing corrections shared by both studies (the LearnDCG report's tables and the
failure study's predictor table), so there is one Holm."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def holm_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaN entries are left out of the family and stay NaN), by
    ``statsmodels.stats.multitest.multipletests(method="holm")``: sorted ascending p_(1) <= ... <= p_(m),
    adj_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)). A family fixed in advance, where a comparison without a
    p-value still counts, is :func:`core.inference.paired.holm`."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out
