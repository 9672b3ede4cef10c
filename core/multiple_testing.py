"""Multiple-testing corrections shared by both studies (the LearnDCG report's tables, the failure study's
predictor table, the inference core's families), so there is one Holm.

Written out in numpy rather than imported from ``statsmodels.stats.multitest``, whose import pulls in
``scipy.stats`` (about a second): the Results page's first render reads Holm p-values and must not pay for it
(``tests/ltr/test_report.py``). ``tests/core/test_multiple_testing.py`` holds it equal to statsmodels'
``multipletests(method="holm")``."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def holm_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaN entries are left out of the family and stay NaN): sorted
    ascending p_(1) <= ... <= p_(m), adj_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)). A family fixed in
    advance, where a comparison without a p-value still counts, is :func:`core.inference.paired.holm`."""
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        order = ok[np.argsort(p[ok], kind="stable")]
        m = order.size
        adjusted = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(adjusted)
    return out
