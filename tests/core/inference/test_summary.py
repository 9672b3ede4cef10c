"""A paired t read from its summary (core.inference.summary.PairedT) reads as the core's Mean of the differences themselves."""
from __future__ import annotations

import numpy as np
import pytest

from core.inference.claims import Mean
from core.inference.summary import PairedT


@pytest.mark.parametrize("shift", [0.0, 0.3, -1.2])
def test_paired_t_from_its_summary_equals_the_mean_of_the_differences(shift):
    d = np.random.default_rng(5).normal(shift, 2.0, 150)
    summary, values = PairedT(float(d.mean()), float(d.std(ddof=1)), d.size), Mean(d)
    for level in (0.95, 0.975):
        assert summary.bounds(level) == pytest.approx(values.bounds(level), rel=1e-9)
    for x in (0.0, 0.5):
        assert summary.p_above(x) == pytest.approx(values.p_above(x), rel=1e-9)
        assert summary.p_below(x) == pytest.approx(values.p_below(x), rel=1e-9)
    assert PairedT(1.0, 0.0, 10).p_above(0.0) == 0.0 and PairedT(1.0, 0.0, 10).bounds(0.95) == (1.0, 1.0)
    assert PairedT(1.0, 2.0, 1).p_above(0.0) == 1.0
