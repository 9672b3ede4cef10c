"""Issue 40 item 1: "holds on every configuration" is an intersection-union test with no correction, its
opposite ("fails somewhere") is Holm-corrected; "somewhere" corrects "holds"; "pooled" is one random-effects
estimate with its heterogeneity."""
from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.meta_analysis import combine_effects

from core.findings import FAILS, HOLDS, INCONCLUSIVE, Part, combine
from core.inference import combine as across
from core.inference.claims import Claim, Proportion, bound, equivalence, joint

UNDER_10 = Claim("under", "bound", threshold=0.10, side="below", min_n=30, counts="queries")


def _whole(decisions) -> str:
    return combine([Part(str(i), {}, d.verdict) for i, d in enumerate(decisions)])[0]


def test_every_configuration_holding_holds_whatever_the_number_of_configurations():
    """0 of 43 on one retriever or on two identical ones: holds both times (before: inconclusive with two)."""
    one = across.every([bound(Proportion(0, 43), UNDER_10)])
    two = across.every([bound(Proportion(0, 43), UNDER_10), bound(Proportion(0, 43), UNDER_10)])
    ten = across.every([bound(Proportion(0, 43), UNDER_10)] * 10)
    assert _whole(one) == _whole(two) == _whole(ten) == HOLDS
    assert two[0].interval == one[0].interval  # each read at the claim's own level


def test_one_configuration_that_fails_makes_the_whole_not_hold_after_holm():
    decisions = across.every([bound(Proportion(0, 43), UNDER_10), bound(Proportion(9, 43), UNDER_10)])
    assert [d.verdict for d in decisions] == [HOLDS, FAILS] and _whole(decisions) == FAILS
    assert decisions[1].p_fails == pytest.approx(2 * bound(Proportion(9, 43), UNDER_10).p_fails)
    assert decisions[1].details["family_size"] == 2


def test_a_failure_that_does_not_survive_holm_is_inconclusive_and_says_so():
    # 8 of 43 fails alone (one-sided p 0.025), not among four configurations
    alone = bound(Proportion(8, 43), UNDER_10)
    assert alone.verdict == FAILS
    four = across.every([alone] + [bound(Proportion(4, 43), UNDER_10)] * 3)
    assert four[0].verdict == INCONCLUSIVE and _whole(four) == INCONCLUSIVE
    assert "after Holm across the family's 4 tests" in four[0].reason()
    assert four[0].details["p_fails_uncorrected"] == pytest.approx(alone.p_fails)


def test_the_parts_of_a_joint_unit_are_each_one_test_of_the_family():
    claim = Claim("half", "equivalence", margin=(0.4, 0.6))
    unit = joint({"A": equivalence(Proportion(500, 1000), claim), "B": equivalence(Proportion(470, 1000), claim)},
                 claim)
    back, _ = across.every([unit, unit])
    assert back.verdict == HOLDS and set(back.components) == {"A", "B"}
    assert back.components["A"].details["family_size"] == 4
    gated = across.every([unit.gated(["a universe under half of the judged queries"])])[0]
    assert gated.verdict == INCONCLUSIVE and gated.gates == ["a universe under half of the judged queries"]
    assert gated.on_its_figures == HOLDS


def test_somewhere_corrects_holds_and_needs_every_unit_to_fail():
    # 1 of 43 holds alone (p 0.036), not among three units
    single = across.somewhere([bound(Proportion(1, 43), UNDER_10)])
    assert single.verdict == HOLDS
    three = across.somewhere([bound(Proportion(1, 43), UNDER_10), bound(Proportion(4, 43), UNDER_10),
                              bound(Proportion(5, 43), UNDER_10)])
    assert three.verdict == INCONCLUSIVE and three.decisions[0].verdict == INCONCLUSIVE
    clear = across.somewhere([bound(Proportion(0, 43), UNDER_10), bound(Proportion(4, 43), UNDER_10)])
    assert clear.verdict == HOLDS
    failing = across.somewhere([bound(Proportion(9, 43), UNDER_10), bound(Proportion(12, 43), UNDER_10)])
    assert failing.verdict == FAILS
    mixed = across.somewhere([bound(Proportion(9, 43), UNDER_10), bound(Proportion(4, 43), UNDER_10)])
    assert mixed.verdict == INCONCLUSIVE


def test_a_pooled_estimate_is_statsmodels_random_effects_with_its_heterogeneity():
    units = {"dl19": (0.05, 0.02, 43), "dl20": (0.06, 0.02, 54), "dl21": (0.04, 0.015, 53)}
    d = across.pooled(units, UNDER_10)
    values = np.array([v for v, _, _ in units.values()])
    variances = np.array([se ** 2 for _, se, _ in units.values()])
    reference = combine_effects(values, variances, method_re="iterated")
    assert d.estimate == pytest.approx(reference.mean_effect_re)
    assert d.verdict == HOLDS and d.n == 150
    het = d.details["heterogeneity"]
    assert het["k"] == 3 and het["i2"] == 0 and het["tau2"] == 0 and 0 < het["q_p"] <= 1
    # datasets that disagree: heterogeneity shows, and the wider random-effects interval straddles 10%
    spread = across.pooled({"dl19": (0.02, 0.01, 43), "dl20": (0.15, 0.01, 54)}, UNDER_10)
    assert spread.details["heterogeneity"]["i2"] > 0.9 and spread.verdict == INCONCLUSIVE
    assert "I² " in spread.shown
    with pytest.raises(ValueError, match="at least two"):
        across.pooled({"dl19": (0.05, 0.02, 43)}, UNDER_10)
