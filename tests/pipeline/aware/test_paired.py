"""The difficulty-aware studies' paired statistics against values worked out by hand."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import wilcoxon

from core.findings import FAILS, HOLDS, INCONCLUSIVE
from pipeline.aware import paired
from pipeline.llm.base import Provenance


def test_all_improving_queries_give_the_exact_wilcoxon_and_sign_test():
    # 4 queries all better: W = 0, exact two-sided p = 2 / 2^4; the sign test 4 of 4: 2 * 0.5^4
    before = {"q1": 0.5, "q2": 0.5, "q3": 0.5, "q4": 0.5, "q5": 0.1}
    after = {"q1": 0.4, "q2": 0.3, "q3": 0.2, "q4": 0.1, "q5": 0.1}
    c = paired.paired_comparison(before, after, better="lower")
    assert (c["n"], c["improved"], c["unchanged"], c["worsened"]) == (5, 4, 1, 0)
    assert c["wilcoxon"]["statistic"] == 0 and c["wilcoxon"]["p"] == pytest.approx(2 / 16)
    assert c["wilcoxon"]["method"] == "exact" and c["wilcoxon"]["n_nonzero"] == 4  # the zero is dropped
    assert c["sign_test_p"] == pytest.approx(2 * 0.5 ** 4)
    assert c["mean_change"] == pytest.approx(-0.2)
    low, high = c["change_interval"]
    assert -0.4 <= low <= high <= 0.0  # every resampled mean is a mean of changes in [-0.4, 0]


def test_direction_decides_what_counts_as_an_improvement():
    c = paired.paired_comparison({"a": 0.2, "b": 0.3}, {"a": 0.4, "b": 0.5}, better="higher")
    assert (c["improved"], c["worsened"]) == (2, 0)
    c = paired.paired_comparison({"a": 0.2, "b": 0.3}, {"a": 0.4, "b": 0.5}, better="lower")
    assert (c["improved"], c["worsened"]) == (0, 2)
    with pytest.raises(ValueError, match="better"):
        paired.paired_comparison({}, {}, better="up")


def test_no_change_has_no_test():
    c = paired.paired_comparison({"a": 1.0}, {"a": 1.0})
    assert c["wilcoxon"]["p"] is None and "no query changed" in c["wilcoxon"]["reason"]
    assert c["sign_test_p"] is None


def test_holm_over_a_declared_family_counts_a_comparison_without_a_p():
    """Issue 40 item 5: the family was the comparisons that produced a p (here 2, x's 0.02); declared, it is 3."""
    family = {name: {"wilcoxon": {"p": p}} for name, p in (("x", 0.01), ("y", 0.04), ("z", None))}
    adjusted = paired.holm(("x", "y", "z"), family)
    assert adjusted["x"] == pytest.approx(0.03) and adjusted["y"] == pytest.approx(0.08) and adjusted["z"] == 1.0


def test_the_count_example_gives_scipys_figures_on_the_integers():
    """Issue 40 item 4: DL19 at cap 3, disagreeing pairs out of 3; as n_dis/3 floats W = 4, p = 0.0547."""
    before, after = [3, 3, 3, 3, 2, 3, 2, 2, 2, 2], [2, 3, 2, 1, 0, 1, 1, 1, 3, 2]
    direct = wilcoxon(np.array(after) - np.array(before))
    c = paired.paired_comparison({f"q{i}": Fraction(v, 3) for i, v in enumerate(before)},
                                 {f"q{i}": Fraction(v, 3) for i, v in enumerate(after)}, better="lower")
    assert c["wilcoxon"]["statistic"] == float(direct.statistic) == 3.0
    assert c["wilcoxon"]["p"] == pytest.approx(float(direct.pvalue)) and round(c["wilcoxon"]["p"], 4) == 0.0469


def test_the_interaction_reaches_each_outcome():
    hard = [Fraction(-1, 2)] * 6 + [Fraction(-1, 4)] * 4
    same = paired.group_difference(hard, [Fraction(0)] * 10, better="lower")
    assert same["test"]["p"] < 0.05 and paired.interaction_verdict("s", same, []).verdict == HOLDS
    none = paired.group_difference([Fraction(0)] * 10, [Fraction(0)] * 10, better="lower")
    assert none["test"]["p"] is None and paired.interaction_verdict("s", none, []).verdict == FAILS
    mixed = paired.group_difference([Fraction(-1, 4), Fraction(1, 4)] * 5, [Fraction(0), Fraction(-1, 4)] * 5,
                                    better="lower")
    assert paired.interaction_verdict("s", mixed, []).verdict == INCONCLUSIVE


def _comparison(n, step):
    before = {f"q{i}": 0.5 for i in range(n)}
    return paired.paired_comparison(before, {q: v + step * (1 + i / 100) for i, (q, v) in enumerate(before.items())})


def test_verdicts_follow_the_rule_and_its_gates():
    up = _comparison(12, 0.1)
    assert paired.comparison_verdict("s", up, up["wilcoxon"]["p"], []).verdict == HOLDS
    down = _comparison(12, -0.1)
    assert paired.comparison_verdict("s", down, down["wilcoxon"]["p"], []).verdict == FAILS
    small = _comparison(6, 0.1)
    part = paired.comparison_verdict("s", small, small["wilcoxon"]["p"], [])
    assert part.verdict == INCONCLUSIVE and part.headline.startswith("inconclusive (n = 6 < minimum 10)")
    # a 1.78B model passes the size gate of every verdict (>= 1B) but not this study's 3B
    gates = paired.model_gates({"judge": Provenance("embedded", "qwen", parameters_b=1.78, size_source="GGUF")})
    assert gates and "under the 3B" in gates[0]
    part = paired.comparison_verdict("s", up, up["wilcoxon"]["p"], gates)
    assert part.verdict == INCONCLUSIVE and part.evidence["on_its_figures"] == HOLDS
    assert not paired.model_gates({"judge": Provenance("ollama", "llama", parameters_b=8.0)})
    assert "unknown size" in paired.model_gates({"judge": Provenance("ollama", "llama")})[0]


def test_the_rule_and_the_gates_read_as_the_pages_show_them():
    """One wording under both verdict tables (judging, retrieval) and on the Query page."""
    assert paired.rule_text(paired.RULE) == (f"Rule: {paired.RULE['statistic']}; alpha 0.05, at least 10 queries and "
                                             f"a 3B model.")
    assert paired.not_a_finding([]) is None
    assert paired.not_a_finding(["judge is a 1.5B model", "n = 4"]) == "Not a finding: judge is a 1.5B model; n = 4."
