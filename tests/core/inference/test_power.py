"""Issue 40: the minimum detectable effect and the n that would decide, from statsmodels' power solver,
checked against the normal formula by hand."""
from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from core.inference.power import Power, could_see, mde, n_to_decide


def test_mde_and_n_to_decide_are_the_one_sided_normal_formula():
    z = norm.ppf(0.95) + norm.ppf(0.8)
    assert mde(0.3, 43, 0.95) == pytest.approx(z * 0.3 / math.sqrt(43), rel=1e-6)
    assert n_to_decide(0.5, 0.05, 0.95) == math.ceil((z * 0.5 / 0.05) ** 2)
    assert n_to_decide(0.5, 0.0, 0.95) is None  # an estimate on the tested value: no n decides
    assert mde(0.3, 0, 0.95) == math.inf and mde(0.0, 10, 0.95) == 0.0
    assert could_see(0.2, 0.3, 43, 0.95) and not could_see(0.05, 0.3, 43, 0.95)


def test_a_power_prints_what_would_decide():
    p = Power(0.114, 43, 520, "the threshold 10.0%", "queries")
    assert p.text() == "MDE 11.4 pts at n = 43 queries; about n = 520 queries would decide (power 80%)"
    assert Power(0.0, 43, None, "the threshold 10.0%", "queries").text().endswith(
        "no n decides (the estimate sits on the threshold 10.0%) (power 80%)")
    assert p.to_dict()["text"] == p.text()
