"""A paired t read from its summary (core.inference.summary.PairedT, which the core's Mean of values also reads
through) gives statsmodels' one-sample t on the differences themselves."""
from __future__ import annotations

import numpy as np
import pytest

from core.inference.claims import Mean
from core.inference.summary import PairedT


@pytest.mark.parametrize("shift", [0.0, 0.3, -1.2])
def test_paired_t_from_its_summary_equals_statsmodels_on_the_differences(shift):
    from statsmodels.stats.weightstats import DescrStatsW

    d = np.random.default_rng(5).normal(shift, 2.0, 150)
    reference = DescrStatsW(d)
    for estimate in (PairedT(float(d.mean()), float(d.std(ddof=1)), d.size), Mean(d)):
        for level in (0.95, 0.975):
            assert estimate.bounds(level) == pytest.approx(reference.tconfint_mean(alpha=2 * (1 - level)), rel=1e-9)
        for x in (0.0, 0.5):
            assert estimate.p_above(x) == pytest.approx(reference.ttest_mean(x, alternative="larger")[1], rel=1e-9)
            assert estimate.p_below(x) == pytest.approx(reference.ttest_mean(x, alternative="smaller")[1], rel=1e-9)
    assert PairedT(1.0, 0.0, 10).p_above(0.0) == 0.0 and PairedT(1.0, 0.0, 10).bounds(0.95) == (1.0, 1.0)
    assert PairedT(1.0, 2.0, 1).p_above(0.0) == 1.0
