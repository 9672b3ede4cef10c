"""Hard-to-retrieve sets: the quantile rule, ties, intersections, Venn regions, the report on real runs."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline import h2r
from pipeline.datasets import load_dataset
from pipeline.retrievers import get_run


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


def test_ties_at_threshold_are_all_included():
    values = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.5, "e": 0.9, "f": 1.0, "g": 1.0, "h": 1.0}
    assert h2r.hard_to_retrieve(values, 0.25).qids == ("a", "b", "c")  # 3 > floor(7*0.25)+1 = 2
    rng = np.random.default_rng(0)
    for n in (5, 43, 54):  # without ties the set has floor((n-1)q)+1 queries
        values = dict(zip(map(str, range(n)), rng.random(n)))
        assert len(h2r.hard_to_retrieve(values, 0.25).qids) == int(np.floor((n - 1) * 0.25)) + 1


def test_bad_input():
    with pytest.raises(ValueError, match="quantile must be in"):
        h2r.hard_to_retrieve({"a": 1.0}, 0.0)
    with pytest.raises(ValueError, match="no scored queries"):
        h2r.hard_to_retrieve({}, 0.25)
    with pytest.raises(ValueError, match="NaN"):
        h2r.hard_to_retrieve({"a": float("nan"), "b": 1.0})


def test_intersection_and_regions():
    sets = {"bm25": ["1", "2", "3"], "tasb": ["2", "3", "4"], "llm": ["3", "5"]}
    assert h2r.intersection(sets.values()) == ["3"]
    regions = h2r.overlap_regions(sets)
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
