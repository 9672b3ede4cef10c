"""Issues 33 and 40: every verdict of the failure paper graded by its evidence, decided by the inference core.

Before, a planted study with answers for 6 queries read ``all_three_under_10pct: holds — 0.0% (0 of 6)``,
the TAS-B configuration "holds" on a 5-vs-4 count, DL21's 5-of-52 universe still gave verdicts and a sub-1B
or unknown-size model's configuration read "not measurable here" (or, from a backend that set no ``small``,
a finding). Now each claim's rule (claims file) sets a statistic, a minimum n and a correction; a
configuration with n under the minimum, a universe under half of the judged queries or a gated model is
``inconclusive`` with that reason first. The designed studies (``designed_overlap``) go through the study's
own composition (hard-set rule, universe, overlap analysis, per-configuration model gate). Issue 40: the claims
are declared as data and decided by ``core.inference`` (an all-configurations claim holds by an
intersection-union test with no correction; the minimum n of "about half exclusive" counts the set)."""
from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from core.inference.claims import Claim

from pipeline import cli
from pipeline.findings.finding import FAILS, HOLDS, INCONCLUSIVE, UNMEASURABLE, paper_claims
from pipeline.findings.overlap import all_three_under_10pct, h2r_h2j_largest, half_exclusive
from pipeline.findings.scope import DatasetStudy
from pipeline.findings.stability import structure_stable
from pipeline.study.result import StudyResult
from tests.pipeline.findings.designed_overlap import SIZED, SUB_1B, UNKNOWN, designed_study, qids

OVERLAP_CLAIMS = (all_three_under_10pct, half_exclusive, h2r_h2j_largest)


def _check(study, *checks):
    return {c.__name__: c([DatasetStudy(study.dataset, study)]) for c in checks}


def _clear_lead(**models) -> StudyResult:
    """43 queries, sets of 11: H2R ∩ H2J 8 queries, H2R ∩ H2G 1, H2G ∩ H2J 1, none hard in all three."""
    q = qids(43)
    h2r, h2j = set(q[:11]), set(q[:8]) | set(q[11:14])
    h2g = {q[8], q[11]} | set(q[14:23])
    return designed_study("clear", {"run": h2r}, h2g, h2j, queries=q, **models)


def test_a_designed_43_query_study_where_h2r_h2j_beats_each_other_pair_holds():
    study = _clear_lead()
    found = _check(study, *OVERLAP_CLAIMS)
    (largest,) = found["h2r_h2j_largest"].parts
    assert largest.measured["pair_counts"] == {"h2r&h2g": 1, "h2r&h2j": 8, "h2g&h2j": 1}
    rule = paper_claims()["h2r_h2j_largest"]["rule"]
    # paired on the same queries: 8 queries in H2R ∩ H2J and not in the other pair, 1 the reverse (exact sign test)
    paired = largest.measured["paired"]["H2R ∩ H2G (incl. H2J)"]
    assert paired["p_beats"] == pytest.approx(binomtest(8, 9, alternative="greater").pvalue)
    assert largest.verdict == HOLDS
    assert found["h2r_h2j_largest"].verdict == HOLDS and found["h2r_h2j_largest"].rule == rule
    # 0 of 43 hard in all three: the one-sided 95% Wilson bounds (scipy here: the 90% interval) lie under 10%
    (all_three,) = found["all_three_under_10pct"].parts
    ci = binomtest(0, 43).proportion_ci(confidence_level=0.90, method="wilson")
    assert all_three.evidence["interval"] == pytest.approx([ci.low, ci.high], abs=1e-9) and ci.high < 0.10
    assert all_three.verdict == HOLDS
    # the headline: verdict, n, the statistic's figures and the models with their sizes
    assert all_three.headline.startswith("holds · n = 43 · 0 of 43 [0.0%, 5.9%] vs < 10.0% (Wilson one-sided 95% "
                                         "bounds) · models: ")
    assert "generator: ollama:llama3.1:8b [abababababab], 8.03B (ollama /api/show)" in all_three.headline
    # exclusive shares of 11-query sets: the minimum n counts the set, so "about half" cannot be read
    assert found["half_exclusive"].parts[0].verdict == INCONCLUSIVE
    assert found["half_exclusive"].parts[0].headline.startswith("inconclusive (n = 11 < minimum 30 (set members))")


def test_zero_of_43_in_every_configuration_of_two_retrievers_holds():
    """Issue 40 item 1: before, one retriever held and two identical ones read inconclusive (Bonferroni made
    the interval [0%, 14.8%]); "holds on every configuration" is an intersection-union test, no correction."""
    q = qids(43)
    h2r, h2j = set(q[:11]), set(q[:8]) | set(q[11:14])
    h2g = {q[8], q[11]} | set(q[14:23])
    study = designed_study("two", {"bm25": h2r, "tasb": set(q[32:43])}, h2g, h2j, queries=q)
    found = _check(study, all_three_under_10pct)["all_three_under_10pct"]
    assert [p.measured["all_three_count"] for p in found.parts] == [0, 0]
    assert [p.verdict for p in found.parts] == [HOLDS, HOLDS] and found.verdict == HOLDS
    assert all(p.evidence["interval"][1] == pytest.approx(0.0592, abs=1e-4) for p in found.parts)


def test_one_configuration_with_9_of_43_hard_in_all_three_does_not_hold():
    q = qids(43)
    h2g, h2j = set(q[:9]) | set(q[20:22]), set(q[:9]) | set(q[30:32])
    study = designed_study("nine", {"a": set(q[:11]), "b": set(q[11:22])}, h2g, h2j, queries=q)
    found = _check(study, all_three_under_10pct)["all_three_under_10pct"]
    a, b = found.parts
    assert a.measured["all_three_count"] == 9 and b.measured["all_three_count"] == 0
    assert a.verdict == FAILS and b.verdict == HOLDS and found.verdict == FAILS
    # "not under 10% somewhere" is Holm-corrected across the two configurations
    one_sided = binomtest(9, 43, 0.1, alternative="greater").pvalue
    assert a.evidence["p_fails"] < 0.05 and a.evidence["family_size"] == 2 and one_sided < 0.025


def test_sets_of_11_with_5_exclusive_are_inconclusive_naming_the_set_size_that_would_decide():
    """Issue 40 item 2: the minimum n counts the set (11), not the universe (43)."""
    q = qids(43)
    core = set(q[:6])
    study = designed_study("five", {"run": core | set(q[6:11])}, core | set(q[11:16]), core | set(q[16:21]),
                           queries=q)
    (part,) = _check(study, half_exclusive)["half_exclusive"].parts
    assert part.measured["exclusive_count"] == {"h2r": 5, "h2g": 5, "h2j": 5}
    assert part.verdict == INCONCLUSIVE and part.evidence["inconclusive_because"][0] == "n = 11 < minimum 30 (set members)"
    power = part.evidence["power"]
    assert power["n"] == 11 and power["n_to_decide"] > 300
    assert f"about n = {power['n_to_decide']} set members would decide" in part.headline
    assert "consistent with the paper for H2R, H2G, H2J" in part.reason


def test_a_lead_of_one_query_is_inconclusive():
    """H2R ∩ H2J 5, H2R ∩ H2G 4 of 43 (the TAS-B case: 5 vs 4 read "holds" before)."""
    q = qids(43)
    h2r, h2j = set(q[:11]), set(q[:5]) | set(q[11:17])
    h2g = set(q[5:9]) | {q[11]} | set(q[17:23])
    study = designed_study("lead", {"run": h2r}, h2g, h2j, queries=q)
    (part,) = _check(study, h2r_h2j_largest)["h2r_h2j_largest"].parts
    assert part.measured["pair_counts"] == {"h2r&h2g": 4, "h2r&h2j": 5, "h2g&h2j": 1}
    assert part.measured["largest_pair"] == "h2r&h2j"  # the largest count, but not beyond chance
    assert part.verdict == INCONCLUSIVE and part.evidence["on_its_figures"] == INCONCLUSIVE
    # 5 vs 4 queries, and 5 vs 1 (exact sign test p 0.11): tied with both other pairs
    assert part.evidence["tied"] == ["H2R ∩ H2G (incl. H2J)", "H2G ∩ H2J (incl. H2R)"]
    assert part.headline.startswith("inconclusive (H2R ∩ H2J (incl. H2G) tied with H2R ∩ H2G (incl. H2J), "
                                    "H2G ∩ H2J (incl. H2R) (neither beats the other)) · n = 43 · ")
    assert "would decide" in part.headline


def test_a_dl21_like_universe_of_5_of_52_judged_queries_is_inconclusive():
    q = qids(52)
    h2r, h2j = set(q[:2]) | set(q[10:21]), {q[0], q[2]} | set(q[21:32])
    study = designed_study("dl21like", {"run": h2r}, set(q[:2]), h2j, queries=q, scored={"h2g": q[:5]})
    assert study.universe_summary("run | designed-generator | designed-judge | binary").n_common == 5
    for name, found in _check(study, *OVERLAP_CLAIMS).items():
        (part,) = found.parts
        assert part.verdict == INCONCLUSIVE, name
        because = part.evidence["inconclusive_because"]
        assert because[-1] == "a universe under half of the judged queries (5 of 52)", name
        assert because[0].endswith("< minimum 30 (set members)" if name == "half_exclusive"
                                   else "n = 5 < minimum 30 (queries (the common universe))"), name


def test_a_universe_under_half_is_inconclusive_whatever_its_n():
    q = qids(70)
    h2r, h2j = set(q[:18]), set(q[10:28])
    study = designed_study("half", {"run": h2r}, set(q[:8]), h2j, queries=q, scored={"h2g": q[:31]})
    (part,) = _check(study, all_three_under_10pct)["all_three_under_10pct"].parts
    assert part.verdict == INCONCLUSIVE and part.evidence["n"] == 31
    assert part.evidence["inconclusive_because"] == ["a universe under half of the judged queries (31 of 70)"]


@pytest.mark.parametrize("model, gate", [
    (SUB_1B, "generator is a sub-1B model (0.49B (ollama /api/show))"),
    (UNKNOWN, "generator is a model of unknown size (state it to count its output)")])
def test_a_gated_model_makes_each_claim_inconclusive_not_unmeasurable(model, gate):
    study = _clear_lead(generator_model=model)
    label = next(iter(study.configurations))
    # configuration_result records which role is gated and why; a stored study reads it back
    assert study.configurations[label].gated == {"generator": gate.removeprefix("generator is ")}
    back = StudyResult.from_dict(json.loads(json.dumps(study.to_dict())))
    assert back.configurations[label].gated == study.configurations[label].gated
    # a study stored before the gate was recorded: derived from its stored provenance, the same rule
    older = study.to_dict()
    del older["configurations"][label]["gated"]
    assert StudyResult.from_dict(older).model_gates(label) == study.configurations[label].gated
    for name, found in _check(study, *OVERLAP_CLAIMS).items():
        (part,) = found.parts
        # the sets of 11 are under the minimum whatever the model (half_exclusive); the model's gate follows
        sets = ["n = 11 < minimum 30 (set members)"] if name == "half_exclusive" else []
        assert part.verdict == INCONCLUSIVE and part.evidence["inconclusive_because"] == [*sets, gate], name
        if not sets:
            assert part.headline.startswith(f"inconclusive ({gate}) · n = 43"), name
    largest = _check(study, h2r_h2j_largest)["h2r_h2j_largest"].parts[0]
    assert largest.evidence["on_its_figures"] == HOLDS and "(on its figures: holds: " in largest.reason


def test_a_sized_model_is_recorded_as_not_gated():
    study = _clear_lead(generator_model=SIZED, judge_model=SIZED)
    assert [c.gated for c in study.configurations.values()] == [{}]


def test_structure_stable_reads_the_change_of_each_pair_share():
    q = qids(43)
    h2r, h2j = set(q[:11]), set(q[:8]) | set(q[11:14])
    h2g = {q[8], q[11]} | set(q[14:23])
    same = designed_study("same", {"a": h2r, "b": set(h2r)}, h2g, h2j, queries=q)
    (part,) = _check(same, structure_stable)["structure_stable"].parts
    assert part.verdict == HOLDS and part.measured["differs_in"] == "retriever"
    # no query moves: still not certainty (a t interval on all-zero changes read [+0, +0]); Newcombe's paired
    # score bounds over 43 queries, inside the tolerance
    for c in part.measured["share_changes"].values():
        assert c["change"] == 0 and -0.1 < c["interval"][0] < -0.02 and 0.02 < c["interval"][1] < 0.1
    # the second retriever's H2R shares no query with H2J: H2R ∩ H2J drops from 8 to 0 of 43 (-0.19), a change
    # whose interval (Newcombe's paired score bounds, one-sided 95%) still reaches under the tolerance of 0.1
    moved = designed_study("moved", {"a": h2r, "b": set(q[32:43])}, h2g, h2j, queries=q)
    (part,) = _check(moved, structure_stable)["structure_stable"].parts
    change = part.measured["share_changes"]["h2r&h2j"]
    assert change["change"] == pytest.approx(-8 / 43) and change["interval"][0] < -0.1 < change["interval"][1] < 0
    assert part.verdict == INCONCLUSIVE
    assert part.headline.startswith("inconclusive (undecided for H2R ∩ H2J (incl. H2G)) · n = 43 · ")
    assert "would decide" in part.headline
    # 100 queries, sets of 25: H2R ∩ H2J drops from 25 to 0 (-0.25), beyond the tolerance in its whole interval
    q = qids(100)
    h2g = set(q[30:55])
    moved = designed_study("moved100", {"a": set(q[:25]), "b": set(q[75:])}, h2g, set(q[:25]), queries=q)
    (part,) = _check(moved, structure_stable)["structure_stable"].parts
    change = part.measured["share_changes"]["h2r&h2j"]
    assert change["change"] == pytest.approx(-0.25) and change["interval"][1] < -0.1
    assert part.verdict == FAILS and part.evidence["level"] == 0.95
    # "beyond the tolerance somewhere" is Holm-corrected across the finding's three changes
    assert part.evidence["components"]["H2R ∩ H2J (incl. H2G)"]["family_size"] == 3


@pytest.mark.slow  # a study through the pipeline: BERTScore (MiniLM) of 6 answers, ~10 s
def test_the_6_query_planted_study_reads_inconclusive_for_every_overlap_claim(tmp_path, monkeypatch, capsys):
    """Through the whole pipeline and the CLI: the designed collection's imported answers for 6 of its 8
    queries (the universe is those 6), two judging setups (structure_stable is measured too)."""
    from pipeline.study.config import load_collection
    from pipeline.study.run import run_study
    from tests.support.failure_fixture import write_collection

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = write_collection(tmp_path / "c")
    answers = files["answers.jsonl"].read_text().splitlines()
    files["answers.jsonl"].write_text("\n".join(answers[:6]) + "\n")
    data = load_collection("planted6", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    run_study(data, retrievers=[f"run={files['run.txt']}"], generators=[f"planted={files['answers.jsonl']}"],
              judges=[f"judge={files['judge.txt']}"], setups=("binary", "graded"), encoder="minilm",
              progress=False, log=lambda m: None)
    assert cli.main(["findings", "--dataset", "planted6", "--json"]) == 0, capsys.readouterr().err
    found = json.loads(capsys.readouterr().out)["findings"]
    for name in ("all_three_under_10pct", "half_exclusive", "h2r_h2j_largest", "structure_stable"):
        assert found[name]["verdict"] == INCONCLUSIVE, name
        assert found[name]["parts"], name
        for part in found[name]["parts"]:
            assert part["headline"].startswith("inconclusive ("), (name, part["headline"])
            if name != "half_exclusive":  # its n counts each set's members
                assert part["headline"].startswith("inconclusive (n = 6 < minimum 30 ("), (name, part["headline"])
                assert part["evidence"]["n"] == 6
        assert found[name]["rule"] == paper_claims()[name]["rule"]
    assert cli.main(["findings", "--dataset", "planted6"]) == 0
    text = capsys.readouterr().out
    assert "all_three_under_10pct: inconclusive — " in text
    assert "  binary: inconclusive · n = 6 · " in text and "n = 6 < minimum 30" in text
    assert cli.main(["findings", "--dataset", "planted6", "--verbose"]) == 0
    verbose = " ".join(line.strip() for line in capsys.readouterr().out.splitlines())
    assert ": inconclusive (n = 6 < minimum 30 (queries (the common universe))) · n = 6 · " in verbose
    assert "models: generator: imported:planted, unknown size; judge: imported:judge, unknown size" in verbose


def test_every_claim_states_its_rule_beside_it():
    claims = paper_claims()
    for name in ("all_three_under_10pct", "half_exclusive", "h2r_h2j_largest", "structure_stable",
                 "typology_agreement", "difficulty_aware_preferred"):
        rule = claims[name]["rule"]
        assert {"type", "statistic", "level", "combine", "family", "min_n", "counts", "reading"} <= set(rule), name
        assert Claim.from_rule(name, rule).combine == "every" and rule["family"], name


def test_a_dataset_without_a_study_stays_not_measurable():
    found = all_three_under_10pct([DatasetStudy("dl22", None, "no study for dl22")])
    assert found.verdict == UNMEASURABLE and found.parts[0].headline == UNMEASURABLE


def test_the_findings_page_shows_each_parts_headline_and_the_claims_rule():
    from pipeline.views import findings as view

    found = _check(_clear_lead(generator_model=SUB_1B), h2r_h2j_largest)["h2r_h2j_largest"]
    frame = view.parts_frame(found)
    assert list(frame.columns) == ["scope", "verdict", "headline", "reason"]
    assert frame["headline"][0].startswith("inconclusive (generator is a sub-1B model (0.49B (ollama /api/show))) · "
                                           "n = 43 · vs H2R ∩ H2G (incl. H2J) 8 vs 1 of 43, p 0.0195")
    assert view.rule_line(found).startswith("order claim; " + paper_claims()["h2r_h2j_largest"]["rule"]["statistic"])
    assert "minimum n 30 (queries (the common universe))" in view.rule_line(found)
    assert "combine every" in view.rule_line(found)
