"""H2G's sampling noise (``pipeline.study.sampling``) on planted values: each figure by hand, each outcome of
the two comparisons a between-generator change is read against (exceeds the within-generator spread or
not), and the samples file's reader (``pipeline.data.samples``)."""
from __future__ import annotations

import json

import pytest

from pipeline.data.samples import SamplesFormatError, read_samples_jsonl
from pipeline.study import sampling

SETS = {0: ["a", "b"], 1: ["a", "c"], 2: ["a", "b"]}
VALUES = {0: {"a": 0.1, "b": 0.2, "c": 0.5, "d": 0.9}, 1: {"a": 0.1, "b": 0.6, "c": 0.3, "d": 0.8},
          2: {"a": 0.2, "b": 0.1, "c": 0.7}}


def test_query_spread_counts_each_query_over_the_samples_that_score_it():
    spread = sampling.query_spread(VALUES, SETS)
    assert spread["a"]["p_hard"] == 1.0 and spread["a"]["n_hard"] == 3
    assert spread["b"]["p_hard"] == pytest.approx(2 / 3)
    assert spread["c"]["p_hard"] == pytest.approx(1 / 3)
    assert spread["d"] == {"mean": pytest.approx(0.85), "sd": pytest.approx(0.0707107, abs=1e-6), "min": 0.8,
                           "max": 0.9, "n_samples": 2, "n_hard": 0, "p_hard": 0.0}
    counts = sampling.hard_counts(spread)
    assert (counts["all"], counts["some"], counts["none"]) == (["a"], ["b", "c"], ["d"])


def test_pairwise_jaccard_of_every_pair_of_samples():
    within = sampling.pairwise_jaccard(SETS)
    assert [(p["first"], p["second"], p["jaccard"]) for p in within["pairs"]] == [
        (0, 1, pytest.approx(1 / 3)), (0, 2, 1.0), (1, 2, pytest.approx(1 / 3))]
    assert (within["n"], within["mean"], within["min"], within["max"]) == (3, pytest.approx(5 / 9),
                                                                        pytest.approx(1 / 3), 1.0)


def test_another_generator_exceeds_the_within_spread_only_below_every_pair():
    within = sampling.pairwise_jaccard(SETS)
    apart = sampling.between_against_within(["d", "c"], SETS, within)  # J with sample 0: 0 < 1/3
    assert apart["jaccard_first"] == 0.0 and apart["exceeds_within"]
    assert apart["within_pairs_at_or_below"] == 0
    alike = sampling.between_against_within(["a", "c"], SETS, within)  # J with sample 0: 1/3, not below
    assert alike["jaccard_first"] == pytest.approx(1 / 3) and not alike["exceeds_within"]
    assert alike["within_pairs_at_or_below"] == 2


def _result(shares: list[float]) -> dict:
    rows = [{"sample": i, "h2r&h2g": round(s * 10), "h2g&h2j": 1, "h2r&h2j": 2, "all_three": 0,
             "all_three_share": 0.0, "n_queries": 10, "sizes": {"h2r": 3, "h2g": 3, "h2j": 3},
             "regions": {"h2r": 1, "h2r&h2g": round(s * 10)}} for i, s in enumerate(shares)]
    return {"id": "x", "generator": "gen-a", "samples": list(range(len(shares))),
            "configurations": {"bm25 | j | binary": {"distribution": sampling._overlap_distribution(rows)}},
            "compare": {}}


def test_a_generator_change_is_read_against_the_range_across_samples():
    result = _result([0.2, 0.4, 0.3])  # |H2R ∩ H2G| / N ranges over 0.2
    big = sampling.generator_change_against_samples(result, ["gen-a", "gen-b"], "bm25", "j", "binary",
                                                    {"h2r&h2g": -0.3, "h2g&h2j": 0.0})
    assert big["pairs"]["h2r&h2g"]["within_range"] == pytest.approx(0.2)
    assert big["pairs"]["h2r&h2g"]["exceeds"] and big["exceeds"]
    assert not big["pairs"]["h2g&h2j"]["exceeds"]  # every sample gives the same share, and so does the change
    small = sampling.generator_change_against_samples(result, ["gen-a", "gen-b"], "bm25", "j", "binary",
                                                      {"h2r&h2g": 0.1})
    assert not small["exceeds"]
    # a result of neither generator, or of another configuration, bears on nothing
    assert sampling.generator_change_against_samples(result, ["gen-b", "gen-c"], "bm25", "j", "binary",
                                                     {"h2r&h2g": 0.5}) is None
    assert sampling.generator_change_against_samples(result, ["gen-a", "gen-b"], "tasb", "j", "binary",
                                                     {"h2r&h2g": 0.5}) is None


def test_samples_reader(tmp_path):
    path = tmp_path / "samples.m.dl19.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (
        {"qid": "1", "sample": 1, "text": "b"}, {"qid": "1", "sample": 0, "text": "a"},
        {"qid": "2", "sample": 0, "text": "c"})))
    assert read_samples_jsonl(path) == {0: {"1": "a", "2": "c"}, 1: {"1": "b"}}
    with pytest.raises(SamplesFormatError, match=r"samples.m.dl19.jsonl:3: query 2 is not a topic"):
        read_samples_jsonl(path, known_qids={"1": ""})
    bad = tmp_path / "bad.jsonl"
    for line, message in (('{"qid": "1", "text": "a"}', 'expected an object with "qid", "sample" and "text"'),
                          ('{"qid": "1", "sample": -1, "text": "a"}', "whole number >= 0"),
                          ('{"qid": "1", "sample": 0, "text": 3}', '"text" must be a string'),
                          ("{nope", "not JSON"),
                          ('{"qid": "1", "sample": 0, "text": "a"}\n{"qid": "1", "sample": 0, "text": "b"}',
                           "appears twice in sample 0")):
        bad.write_text(line + "\n")
        with pytest.raises(SamplesFormatError, match=message):
            read_samples_jsonl(bad)
    bad.write_text("\n")
    with pytest.raises(SamplesFormatError, match="no samples"):
        read_samples_jsonl(bad)


def test_designed_samples_give_the_designed_spread(tmp_path, monkeypatch):
    """The designed collection (tests/support/failure_fixture.py), real MiniLM BERTScore: every figure known."""
    from tests.support.sampling_fixture import run_designed_sampling

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    result = run_designed_sampling(tmp_path / "designed")
    assert {s: set(members) for s, members in result["sets"].items()} == {"0": {"q6", "q8"}, "1": {"q6", "q8"},
                                                                           "2": {"q5", "q8"}}
    assert {q: r["p_hard"] for q, r in result["queries"].items() if r["p_hard"]} == {
        "q8": 1.0, "q6": pytest.approx(2 / 3), "q5": pytest.approx(1 / 3)}
    assert (result["hard"]["all"], result["hard"]["some"]) == (["q8"], ["q5", "q6"])
    assert [p["jaccard"] for p in result["jaccard"]["pairs"]] == [1.0, pytest.approx(1 / 3), pytest.approx(1 / 3)]
    other = result["compare"]["other"]
    assert other["h2g"] and set(other["h2g"]) == {"q7", "q8"}
    assert other["jaccard_first"] == pytest.approx(1 / 3) and not other["exceeds_within"]
    # H2R = {q7, q8}, H2J = {q1, q8} (binary): |H2R ∩ H2G| and |H2G ∩ H2J| are 1 in every sample, the other
    # generator's |H2R ∩ H2G| is 2
    configuration = result["configurations"]["designed-run | designed-judge | binary"]
    assert [(r["h2r&h2g"], r["h2g&h2j"], r["all_three"]) for r in configuration["per_sample"]] == [(1, 1, 1)] * 3
    assert configuration["generators"]["other"]["h2r&h2g"] == 2
    assert configuration["distribution"]["regions"]["h2g"] == {"n": 3, "mean": 1.0, "min": 1, "max": 1}
    # the change of generator for |H2R ∩ H2G| / N (+1/8) exceeds the samples' range (0)
    change = sampling.generator_change_against_samples(result, ["designed-samples", "other"], "designed-run",
                                                       "designed-judge", "binary", {"h2r&h2g": 1 / 8})
    assert change["exceeds"] and change["h2g_jaccard"]["exceeds_within"] is False
    # what structure_stable reads: the stored result that bears on a change of generator, else None
    stored = sampling.within_generator_evidence("designed", ["other", "designed-samples"], "designed-run",
                                                "designed-judge", "binary", {"h2r&h2g": 1 / 8})
    assert stored == change
    assert sampling.within_generator_evidence("designed", ["a", "b"], "designed-run", "designed-judge", "binary",
                                              {"h2r&h2g": 1 / 8}) is None
    assert sampling.within_generator_evidence("dl19", ["other", "designed-samples"], "designed-run",
                                              "designed-judge", "binary", {"h2r&h2g": 1 / 8}) is None
