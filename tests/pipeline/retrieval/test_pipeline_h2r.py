"""Hard-to-retrieve sets: the quantile rule, ties, intersections, Venn regions, the report on real runs."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.retrieval import h2r
from pipeline.data.datasets import load_dataset
from pipeline.retrieval.retrievers import get_run
from pipeline.sets import overlap, rule


def test_rule_is_linear_interpolated_quantile_inclusive():
    values = {f"q{i}": v for i, v in enumerate([0.8, 0.1, 0.5, 0.2, 0.7, 0.3, 0.6, 0.4])}
    hard = h2r.hard_to_retrieve(values, 0.25, "x")
    # position (n-1)q = 1.75 between 0.2 and 0.3: threshold 0.275, so 0.1 and 0.2 are hard
    assert hard.threshold == pytest.approx(0.275)
    assert hard.qids == ("q1", "q3")  # hardest first
    assert hard.mean == pytest.approx(0.15) and hard.overall_mean == pytest.approx(0.45)
    assert hard.n_queries == 8
    everything = h2r.hard_to_retrieve(values, 1.0)
    assert len(everything.qids) == 8


def test_a_tie_block_closer_to_the_target_is_included_whole():
    values = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.5, "e": 0.9, "f": 1.0, "g": 1.0, "h": 1.0}
    hard = h2r.hard_to_retrieve(values, 0.25)  # target floor(7*0.25)+1 = 2; block of 3 at 0: 3 is closer than 0
    assert hard.qids == ("a", "b", "c") and hard.n_target == 2
    assert (hard.tie_value, hard.tie_block, hard.tie_included, hard.ties_decide) == (0.0, 3, True, True)
    rng = np.random.default_rng(0)
    for n in (5, 43, 54):  # without ties the set has floor((n-1)q)+1 queries
        values = dict(zip(map(str, range(n)), rng.random(n)))
        assert len(h2r.hard_to_retrieve(values, 0.25).qids) == int(np.floor((n - 1) * 0.25)) + 1


# 12 queries, q = 0.25: target floor(11 * 0.25) + 1 = 3
def test_a_tie_block_far_past_the_target_is_left_out_and_reported():
    # a judge capped at 4 pairs: shares in steps of 1/4; hardest = highest disagreement
    shares = [1.0, 0.75, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.0, 0.0]
    values = {f"q{i:02d}": v for i, v in enumerate(shares)}
    # the earlier rule: numpy.quantile(v, 0.75) = 0.5 (ascending index 8.25 in 0.5's block), so 7 "hard" queries
    assert sum(v >= np.quantile(shares, 0.75) for v in shares) == 7
    hard = rule.hard_set(values, 0.25, "h2j", top=True)
    # 2 above the block of 5 at 0.5: sizes 2 (|2-3| = 1) or 7 (|7-3| = 4) -> 2
    assert hard.qids == ("q00", "q01") and hard.threshold == pytest.approx(0.5)
    assert (hard.n_target, hard.tie_value, hard.tie_block, hard.tie_included) == (3, 0.5, 5, False)
    assert hard.ties_decide and hard.share == pytest.approx(2 / 12) and hard.mean == pytest.approx(0.875)
    warning = hard.warning()
    assert "5 queries tie at 0.5" in warning and "left out" in warning and "2 of 12" in warning
    d = hard.as_dict()
    assert d["n_hard"] == 2 and d["tie_block"] == 5 and d["share"] == pytest.approx(2 / 12) and d["warning"] == warning


def test_equal_distance_keeps_the_smaller_set_and_no_ties_no_warning():
    # bottom: 2 strictly below a block of 2 at 0.3 -> sizes 2 or 4, both 1 from the target 3 -> 2
    values = dict(zip("abcdefghijkl", [0.1, 0.2, 0.3, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0]))
    hard = rule.hard_set(values, 0.25, "h2r")
    assert hard.qids == ("a", "b") and hard.ties_decide and not hard.tie_included
    # 1 below a block of 3 at 0.2 -> sizes 1 (|1-3| = 2) or 4 (|4-3| = 1) -> 4
    values = dict(zip("abcdefghijkl", [0.1, 0.2, 0.2, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0]))
    hard = rule.hard_set(values, 0.25, "h2r")
    assert hard.qids == ("a", "b", "c", "d") and hard.tie_included and "included" in hard.warning()
    # a block that ends at the target decides nothing
    values = dict(zip("abcdefghijkl", [0.1, 0.2, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0]))
    hard = rule.hard_set(values, 0.25, "h2r")
    assert hard.qids == ("a", "b", "c") and not hard.ties_decide and hard.warning() is None


def test_when_most_disagreements_are_zero_not_every_query_is_hard():
    # issue 18: with most shares 0 the top quantile's threshold is 0 and ">= 0" made every query hard
    values = {f"q{i:02d}": v for i, v in enumerate([0.5, 0.25] + [0.0] * 10)}
    assert np.quantile(list(values.values()), 0.75) == 0.0
    hard = rule.hard_set(values, 0.25, "h2j", top=True)  # target 3; 2 above a block of 10 zeros: 2 (vs 12)
    assert hard.qids == ("q00", "q01") and hard.tie_block == 10 and not hard.tie_included


def test_when_most_values_tie_at_the_hardest_the_set_is_empty_and_says_why():
    values = {f"q{i:02d}": (0.0 if i < 8 else 0.1 * i) for i in range(12)}  # 8 queries at nDCG 0; target 3
    hard = rule.hard_set(values, 0.25, "h2r")
    assert hard.qids == () and hard.mean is None and hard.tie_block == 8
    assert "no query is distinguishably harder" in hard.warning()


def test_bad_input():
    with pytest.raises(ValueError, match="quantile must be in"):
        h2r.hard_to_retrieve({"a": 1.0}, 0.0)
    with pytest.raises(ValueError, match="no scored queries"):
        h2r.hard_to_retrieve({}, 0.25)
    with pytest.raises(ValueError, match="NaN"):
        h2r.hard_to_retrieve({"a": float("nan"), "b": 1.0})


def test_intersection_and_regions():
    sets = {"bm25": ["1", "2", "3"], "tasb": ["2", "3", "4"], "llm": ["3", "5"]}
    assert overlap.intersection(sets.values()) == ["3"]
    regions = overlap.overlap_regions(sets)
    assert regions[("bm25",)] == ["1"] and regions[("tasb",)] == ["4"] and regions[("llm",)] == ["5"]
    assert regions[("bm25", "tasb")] == ["2"] and regions[("bm25", "llm")] == []
    assert regions[("bm25", "tasb", "llm")] == ["3"]
    assert sorted(q for r in regions.values() for q in r) == ["1", "2", "3", "4", "5"]  # a partition


def test_report_on_shared_runs(shared_dir):
    data = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    runs = [get_run(data, "bm25"), get_run(data, "tasb")]
    report = h2r.h2r_report(data, runs, quantile=0.25)
    for name, r in report["retrievers"].items():
        assert r["kind"] == "imported" and "imported full-corpus run" in r["provenance"]
        values = r["per_query"]
        assert set(values) == set(data.judged_qids)
        ranked = sorted(values, key=lambda q: (values[q], q))
        assert r["hard"] == ranked[:11]  # 43 judged queries, no tie at the threshold
        assert r["hard_mean"] == pytest.approx(np.mean([values[q] for q in ranked[:11]]))
    assert report["intersection"] == sorted(set(report["retrievers"]["bm25"]["hard"])
                                            & set(report["retrievers"]["tasb"]["hard"]))
    with pytest.raises(ValueError, match="distinct"):
        h2r.h2r_report(data, [runs[0], runs[0]])
    info = report["retrievers"]["bm25"]["hard_set"]
    assert (info["n_hard"], info["n_queries"], info["n_target"], info["tie_block"]) == (11, 43, 11, 1)
    assert info["warning"] is None and info["share"] == pytest.approx(11 / 43)


def _capped_disagreement(data, judge: str, setup: str, cap):
    """The imported judge's labels of the pairs an LLM judge capped at ``cap`` per query would label."""
    from pipeline.judging.judgments import Judgments, import_judgments, sample_pairs
    from pipeline.judging.h2j import disagreement

    qrels = data.require_qrels()
    full = import_judgments(judge, data.folder / "judgments" / f"judgments.{judge}.dl19.txt", setup)
    sample = sample_pairs({q: qrels[q] for q in data.queries()}, cap, eligible=data.passages.__contains__)
    labels = {q: {p: full.labels[q][p] for p in pids if p in full.labels.get(q, {})} for q, pids in sample.items()}
    values, _ = disagreement(Judgments(judge, setup, {}, labels, False, cap=cap), qrels, data.queries())
    return values


@pytest.mark.parametrize("judge, setup, cap, before, after", [
    ("flan-t5-large", "binary", 20, 19, 10),  # issue 18: threshold 0.25, |H2J| = 19 of 43
    ("flan-t5-large", "binary", 4, 28, 10),
    ("llama-3.3-70b", "graded", 4, 25, 10),
    ("llama-3.3-70b", "binary", None, 11, 11),  # no cap: no ties, the rule unchanged
])
def test_capped_real_dl19_judge_no_longer_makes_most_queries_hard(shared_dir, judge, setup, cap, before, after):
    data = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    values = _capped_disagreement(data, judge, setup, cap)
    v = np.fromiter(values.values(), float)
    assert len(v) == 43 and int((v >= np.quantile(v, 0.75)).sum()) == before  # the reproduction (earlier rule)
    hard = rule.hard_set(values, 0.25, "h2j", top=True)
    assert len(hard.qids) == after and hard.n_target == 11
    assert hard.ties_decide == (cap is not None) and (hard.warning() is not None) == (cap is not None)
    if (judge, cap) == ("flan-t5-large", 20):
        assert hard.threshold == 0.25 and hard.tie_value == 0.25 and hard.tie_block == 9
