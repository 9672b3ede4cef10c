"""Issue 40: each claim type's decision rule reaches each of its outcomes, with the figures a reader checks
(the intervals and tests recomputed here by other routes: scipy's binomtest, by hand)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm, ttest_1samp

from core.findings import FAILS, HOLDS, INCONCLUSIVE
from core.inference.claims import (Claim, Mean, Normal, Proportion, Sign, bound, decide, effect, equivalence,
                                   joint, order)

UNDER_10 = Claim("under", "bound", threshold=0.10, side="below", min_n=30, counts="queries")
AT_LEAST_76 = Claim("at_least", "bound", threshold=0.76, side="above", min_n=30, counts="cells")
ABOUT_HALF = Claim("half", "equivalence", margin=(0.4, 0.6), min_n=30, counts="set members")


def _wilson(k: int, n: int, one_sided: float) -> tuple[float, float]:
    """Wilson score bounds by hand, each one-sided at ``one_sided``."""
    z = norm.ppf(one_sided)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@pytest.mark.parametrize("k, verdict", [(0, HOLDS), (4, INCONCLUSIVE), (9, FAILS)])
def test_a_bound_under_10_percent_reaches_each_outcome_on_43_queries(k, verdict):
    d = bound(Proportion(k, 43, "queries"), UNDER_10)
    low, high = _wilson(k, 43, 0.95)
    assert d.interval == pytest.approx((max(low, 0), high), abs=1e-9)
    assert d.verdict == verdict
    # the interval and the test agree: holds exactly when the one-sided upper bound is under 10%
    assert (d.interval[1] < 0.10) == (verdict == HOLDS) and (d.interval[0] > 0.10) == (verdict == FAILS)
    # 0 of 43: one-sided 95% upper bound 5.9% (the two-sided 95% Wilson interval's 8.2% is a stricter level)
    if k == 0:
        assert d.interval[1] == pytest.approx(0.0592, abs=1e-4) and d.reason().startswith("under 10.0%: 0 of 43")


def test_an_inconclusive_bound_carries_its_mde_and_the_n_that_would_decide():
    d = bound(Proportion(4, 43, "queries"), UNDER_10)
    ev = d.evidence()
    assert ev["inconclusive_because"] == ["the interval straddles 10.0%"]
    # MDE: (z_.95 + z_.8) sd / sqrt(n), sd of a share at the threshold
    expected = (norm.ppf(0.95) + norm.ppf(0.8)) * math.sqrt(0.1 * 0.9) / math.sqrt(43)
    assert ev["power"]["mde"] == pytest.approx(expected, rel=1e-6) and ev["power"]["n"] == 43
    distance = 0.1 - 4 / 43
    assert ev["power"]["n_to_decide"] == math.ceil(((norm.ppf(0.95) + norm.ppf(0.8)) * 0.3 / distance) ** 2)
    assert "would decide" in ev["decides"]


@pytest.mark.parametrize("k, n, verdict", [(110, 120, HOLDS), (78, 120, FAILS), (92, 120, INCONCLUSIVE)])
def test_a_bound_at_least_a_threshold_reaches_each_outcome(k, n, verdict):
    d = bound(Proportion(k, n, "cells"), AT_LEAST_76)
    assert d.verdict == verdict
    exact = binomtest(k, n, 0.76, alternative="greater").pvalue
    assert (exact < 0.05) == (verdict == HOLDS)  # the score test and the exact test agree at these counts


def test_a_bound_under_the_minimum_n_is_inconclusive_and_keeps_what_its_figures_say():
    d = bound(Proportion(0, 29, "queries"), UNDER_10)
    assert d.verdict == INCONCLUSIVE and d.on_its_figures == HOLDS
    assert d.gates == ["n = 29 < minimum 30 (queries)"]
    assert d.reason().startswith("n = 29 < minimum 30 (queries) (on its figures: holds: under 10.0%")
    assert d.gated(["generator is a sub-1B model"]).gates[-1] == "generator is a sub-1B model"


@pytest.mark.parametrize("k, n, verdict, consistent", [
    (500, 1000, HOLDS, True), (100, 1000, FAILS, False), (900, 1000, FAILS, False),
    (45, 100, INCONCLUSIVE, True), (33, 100, INCONCLUSIVE, False)])
def test_an_equivalence_reaches_each_outcome_and_says_when_it_is_consistent(k, n, verdict, consistent):
    d = equivalence(Proportion(k, n), ABOUT_HALF)
    assert d.verdict == verdict and d.consistent is consistent
    low, high = _wilson(k, n, 0.95)
    inside = 0.4 < low and high < 0.6
    assert inside == (verdict == HOLDS)
    if verdict == INCONCLUSIVE:
        assert ("consistent with the paper" in d.words) == consistent
        assert d.evidence()["power"]["n_to_decide"] > n


def test_five_of_eleven_exclusive_is_inconclusive_naming_the_n_that_would_decide():
    """Issue 40 item 2: the minimum n counts the set (11), and the verdict says how large a set would decide."""
    d = equivalence(Proportion(5, 11, "set members"), ABOUT_HALF)
    assert d.verdict == INCONCLUSIVE and d.gates == ["n = 11 < minimum 30 (set members)"]
    need = d.evidence()["power"]["n_to_decide"]
    assert need > 300 and f"about n = {need} set members would decide" in d.evidence()["decides"]


def test_equivalence_on_a_paired_mean_is_a_tost():
    """Per-unit changes: the two one-sided t tests of statsmodels' DescrStatsW, checked with scipy."""
    rng = np.random.default_rng(3)
    changes = rng.normal(0.01, 0.05, 200)
    claim = Claim("stable", "equivalence", margin=(-0.1, 0.1), scale="plain")
    d = equivalence(Mean(list(changes)), claim)
    p_low = ttest_1samp(changes, -0.1, alternative="greater").pvalue
    p_high = ttest_1samp(changes, 0.1, alternative="less").pvalue
    assert d.p_holds == pytest.approx(max(p_low, p_high)) and d.verdict == HOLDS
    assert equivalence(Mean([0.0] * 40), claim).verdict == HOLDS  # no change at all: known exactly
    assert equivalence(Mean([-0.25] * 40), claim).verdict == FAILS


def test_an_order_holds_fails_or_names_the_tied_group():
    claim = Claim("largest", "order", min_n=30, counts="queries")
    holds = order("X", {"A": Sign(8, 1, 43), "B": Sign(9, 0, 43)}, claim)
    assert holds.verdict == HOLDS
    assert holds.details["competitors"]["A"]["p_beats"] == pytest.approx(binomtest(8, 9, alternative="greater").pvalue)
    tied = order("X", {"A": Sign(5, 4, 43), "B": Sign(9, 0, 43)}, claim)
    assert tied.verdict == INCONCLUSIVE and tied.tied == ("A",)
    assert tied.words == "X tied with A (neither beats the other)"
    assert tied.evidence()["power"]["n_to_decide"] > 43
    beaten = order("X", {"A": Sign(0, 9, 43), "B": Sign(9, 0, 43)}, claim)
    assert beaten.verdict == FAILS and beaten.words == "A beats X"
    # "one beats X" is corrected across the competitors (Holm): 1 vs 7 alone beats X (p 0.035), not among 3
    alone = order("X", {"A": Sign(1, 7, 43)}, claim)
    three = order("X", {"A": Sign(1, 7, 43), "B": Sign(3, 3, 43), "C": Sign(3, 3, 43)}, claim)
    assert alone.verdict == FAILS and three.verdict == INCONCLUSIVE
    assert three.tied == ("A", "B", "C")


def test_the_sign_test_reads_a_difference_against_zero_only():
    with pytest.raises(ValueError, match="against 0 only"):
        Sign(3, 1, 10).p_above(0.1)
    low, high = Sign(8, 1, 43).bounds(0.95)
    assert low > 0 and high <= 9 / 43 and low < 7 / 43 < high


def test_an_effect_reports_direction_and_magnitude_apart():
    claim = Claim("lead", "effect", side="above", target=1.96, scale="plain")
    rng = np.random.default_rng(7)
    small = list(rng.normal(0.59, 2.0, 400))  # a lead in the right direction, smaller than the paper's
    d = effect(Mean(small), claim)
    assert d.verdict == HOLDS and d.magnitude == "below"
    assert "lies below the paper's 1.96" in d.shown
    near = effect(Normal(1.9, 0.4, 100), claim)
    assert near.verdict == HOLDS and near.magnitude == "contains"
    bigger = effect(Normal(4.0, 0.5, 100), claim)
    assert bigger.magnitude == "above"
    none = effect(Normal(0.1, 0.5, 100), claim)
    # no direction shown, though the test would have seen the paper's 1.96: its magnitude says it lies below
    assert none.verdict == INCONCLUSIVE and none.magnitude == "below" and none.details["could_see_paper"] is True
    assert "would decide" in none.evidence()["decides"]  # non-significance is never a "does not hold"
    blind = effect(Normal(0.5, 0.8, 100), claim)  # a test that could not have seen the paper's effect
    assert blind.verdict == INCONCLUSIVE and blind.magnitude == "contains" and blind.details["could_see_paper"] is False
    opposite = effect(Normal(-1.5, 0.5, 100), claim)
    assert opposite.verdict == FAILS and opposite.magnitude == "below"
    assert decide(Normal(-1.5, 0.5, 100), claim).verdict == FAILS


def test_a_joint_unit_holds_only_when_each_part_holds():
    claim = Claim("half", "equivalence", margin=(0.4, 0.6))
    inside, outside, open_ = (equivalence(Proportion(*c), claim) for c in ((500, 1000), (100, 1000), (45, 100)))
    assert joint({"A": inside, "B": inside}, claim).verdict == HOLDS
    assert joint({"A": inside, "B": outside, "C": open_}, claim).verdict == FAILS
    mixed = joint({"A": inside, "C": open_}, claim)
    assert mixed.verdict == INCONCLUSIVE and mixed.words == "undecided for C; consistent with the paper for C" and mixed.power == open_.power
    gated = joint({"A": inside, "B": equivalence(Proportion(5, 11), ABOUT_HALF)}, claim)
    assert gated.gates == ["B: n = 11 < minimum 30 (set members)"]


def test_a_claim_is_read_from_its_declaration():
    rule = {"type": "equivalence", "margin": [0.4, 0.6], "level": 0.95, "combine": "every", "min_n": 30,
            "counts": "set members", "statistic": "Wilson"}
    claim = Claim.from_rule("half_exclusive", rule)
    assert claim.margin == (0.4, 0.6) and claim.alpha == pytest.approx(0.05) and claim.counts == "set members"
    per_figure = Claim.from_rule("t", {"type": "bound", "side": "above", "threshold": {"a": 0.76, "p": 0.7}})
    assert per_figure.at("p").threshold == 0.7
    with pytest.raises(ValueError, match="needs a margin"):
        Claim("x", "equivalence")
    with pytest.raises(ValueError, match="unknown type"):
        Claim("x", "band")
    with pytest.raises(ValueError, match="read with its own function"):
        decide(Proportion(1, 2), Claim("o", "order"))


def test_a_gated_decision_shows_power_only_where_its_figures_decide_nothing():
    held = bound(Proportion(0, 43), UNDER_10).gated(["generator is a model of unknown size"])
    assert held.verdict == INCONCLUSIVE and "power" not in held.evidence()
    straddles = bound(Proportion(4, 43), UNDER_10).gated(["generator is a model of unknown size"])
    assert straddles.evidence()["power"]["n"] == 43
