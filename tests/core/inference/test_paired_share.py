"""Issue 40 (leftover): a pairwise share's change over the same queries is a paired difference of proportions.
Before, structure_stable read it as a t interval on the per-query changes (-1, 0, 1): when no query moved their
sd is 0 and the interval was [+0, +0], a certainty 43 queries cannot give. Newcombe's hybrid score interval
(method 10) bounds it by what n units can show."""
from __future__ import annotations

import pytest

from core.findings import FAILS, HOLDS, INCONCLUSIVE
from core.inference.claims import Claim, equivalence
from core.inference.paired_share import PairedShares

STABLE = Claim("stable", "equivalence", margin=(-0.1, 0.1), level=0.95, scale="signed", min_n=30)


def test_the_interval_is_newcombes_on_a_published_table():
    # Fagerland, Lydersen & Laake (2017) ch. 8, Cavo et al. 2012 (59, 6 / 16, 80): first minus second -0.0621,
    # Newcombe square-and-add 95% -0.1186 to -0.0046 (the R package contingencytables' test of it). The
    # estimate here is second minus first, and its one-sided 97.5% bounds are that two-sided interval.
    shares = PairedShares(both=59, first_only=6, second_only=16, neither=80)
    assert shares.value == pytest.approx(10 / 161)
    low, high = shares.bounds(0.975)
    assert (round(low, 4), round(high, 4)) == (0.0046, 0.1186)


def test_no_query_moving_is_not_certainty():
    for both in (10, 0):  # a share of 10 of 43 in both, and of none in both
        shares = PairedShares.of([1] * both + [0] * (43 - both), [1] * both + [0] * (43 - both))
        low, high = shares.bounds(0.95)
        assert shares.value == 0 and low < -0.03 and high > 0.03
        assert low == pytest.approx(-high)


def test_p_values_invert_the_bounds():
    shares = PairedShares(both=2, first_only=8, second_only=1, neither=32)
    for level in (0.9, 0.95, 0.99):
        low, high = shares.bounds(level)
        assert shares.p_above(low) == pytest.approx(1 - level, abs=1e-9)
        assert shares.p_below(high) == pytest.approx(1 - level, abs=1e-9)
    assert shares.p_above(shares.value) == shares.p_below(shares.value) == 0.5
    assert shares.p_above(-0.05) + shares.p_below(-0.05) == pytest.approx(1)


def test_each_outcome_of_an_equivalence_on_paired_shares():
    # 43 queries, none moves: inside +/- 0.1
    same = equivalence(PairedShares(both=8, first_only=0, second_only=0, neither=35, unit="queries"), STABLE)
    assert same.verdict == HOLDS and same.interval[0] < 0 < same.interval[1]
    # 8 of 43 leave the pair (-0.19): the interval reaches inside the margin
    moved = equivalence(PairedShares(both=0, first_only=8, second_only=0, neither=35), STABLE)
    assert moved.verdict == INCONCLUSIVE and moved.interval[0] < -0.1 < moved.interval[1] < 0
    # 25 of 100 leave it: wholly outside
    far = equivalence(PairedShares(both=0, first_only=25, second_only=0, neither=75), STABLE)
    assert far.verdict == FAILS and far.interval[1] < -0.1
    assert "Newcombe" in far.method
