"""Overlap figures on hand-made sets, and the top/bottom hard-set rule."""
from __future__ import annotations

import math

import pytest

from pipeline.study.run import combine
from pipeline.sets.rule import hard_set
from pipeline.sets.overlap import overlap_analysis, pairwise, stability_table

# 20 queries; R = {0..5}, G = {4..9}, J = {0,1,2,4,10,11}
UNIVERSE = [f"q{i:02d}" for i in range(20)]
R = {f"q{i:02d}" for i in range(6)}
G = {f"q{i:02d}" for i in range(4, 10)}
J = {f"q{i:02d}" for i in (0, 1, 2, 4, 10, 11)}


def test_regions_shares_and_pairs_on_hand_made_sets():
    a = overlap_analysis({"h2r": R, "h2g": G, "h2j": J}, UNIVERSE)
    counts = {k: v["count"] for k, v in a["regions"].items()}
    assert counts == {"h2r": 1, "h2g": 4, "h2j": 2, "h2r&h2g": 1, "h2r&h2j": 3, "h2g&h2j": 0, "h2r&h2g&h2j": 1}
    assert a["regions"]["h2r"]["qids"] == ["q03"] and a["regions"]["h2r&h2g&h2j"]["qids"] == ["q04"]
    assert sum(counts.values()) == len(R | G | J) == 12
    assert a["all_three"] == {"count": 1, "share": 1 / 20, "qids": ["q04"]}
    assert a["exclusive"]["h2g"] == {"count": 4, "share": 4 / 6}
    rj = a["pairwise"]["h2r&h2j"]
    assert rj["count"] == 4 and rj["jaccard"] == pytest.approx(4 / 8)
    assert rj["share_of_first"] == pytest.approx(4 / 6) and rj["expected_if_independent"] == pytest.approx(36 / 20)
    # P(X >= 4), X ~ Hypergeom(N=20, K=6, n=6), by hand: sum_k C(6,k) C(14,6-k) / C(20,6)
    by_hand = sum(math.comb(6, k) * math.comb(14, 6 - k) for k in range(4, 7)) / math.comb(20, 6)
    assert rj["p_value"] == pytest.approx(by_hand)
    assert a["largest_pairwise"]["pair"] == "h2r&h2j" and a["largest_pairwise"]["p_value"] == pytest.approx(by_hand)
    gj = a["pairwise"]["h2g&h2j"]  # only q04: P(X >= 1) = 1 - P(X = 0)
    assert gj["count"] == 1 and gj["p_value"] == pytest.approx(1 - math.comb(14, 6) / math.comb(20, 6))


def test_sets_outside_the_universe_are_refused():
    with pytest.raises(ValueError, match="outside the universe"):
        overlap_analysis({"h2r": {"zz"}, "h2g": set(), "h2j": set()}, UNIVERSE)


def test_identical_sets_and_stability_rows():
    p = pairwise({"a", "b"}, {"a", "b"}, 4)
    assert p["count"] == 2 and p["jaccard"] == 1.0 and p["p_value"] == pytest.approx(1 / 6)  # 1 / C(4,2)
    a = overlap_analysis({"h2r": R, "h2g": G, "h2j": J}, UNIVERSE)
    rows = stability_table({"c1": a, "c2": a})
    assert len(rows) == 6 and sum(r["largest"] for r in rows) == 2


def test_top_quantile_includes_ties():
    values = {"a": 0.0, "b": 0.1, "c": 0.5, "d": 0.5, "e": 0.2}
    top = hard_set(values, 0.25, "h2j", top=True)  # quantile(v, 0.75) = 0.5 -> c, d
    assert top.qids == ("c", "d") and top.threshold == pytest.approx(0.5)
    bottom = hard_set(values, 0.25, "h2g")  # quantile(v, 0.25) = 0.1 -> a, b
    assert bottom.qids == ("a", "b")


def test_sets_and_figures_are_computed_over_the_queries_all_three_tasks_score():
    """Under the ``common`` universe rule: the universe is the intersection: q1 has no H2J value and q6 no H2G value, so neither can be in
    any set, although q1 has the lowest nDCG@10 and q6 the highest disagreement of all."""
    values = {"h2r": {"q1": 0.0, "q2": 0.1, "q3": 0.5, "q4": 0.6, "q5": 0.7, "q6": 0.8},
              "h2g": {"q1": 0.2, "q2": 0.9, "q3": 0.3, "q4": 0.8, "q5": 0.7},
              "h2j": {"q2": 0.0, "q3": 0.5, "q4": 0.25, "q5": 0.0, "q6": 1.0}}
    result = combine("t", {"retriever": "r", "generator": "g", "judge": "j", "setup": "binary"}, values, {}, 0.25,
                     universe="common")  # per task: tests/pipeline/study/test_study_universe.py
    assert result.universe == ["q2", "q3", "q4", "q5"]
    # 4 queries, target floor(3 * 0.25) + 1 = 1: the lowest nDCG q2, the lowest F1 q3, the highest disagreement q3
    assert result.sets == {"h2r": ["q2"], "h2g": ["q3"], "h2j": ["q3"]}
    a = result.analysis
    assert a["n_queries"] == 4 and a["all_three"]["share"] == 0.0
    gj = a["pairwise"]["h2g&h2j"]
    # expected |G| |J| / N = 1/4; P(X >= 1), X ~ Hypergeom(4, 1, 1) = 1/4
    assert gj["count"] == 1 and gj["expected_if_independent"] == pytest.approx(0.25)
    assert gj["p_value"] == pytest.approx(0.25)
    assert result.set_info["h2r"]["n_queries"] == 4 and set(result.values["h2r"]) == set(result.universe)
