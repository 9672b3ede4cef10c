"""Issue 29: ``typology_agreement`` and ``difficulty_aware_preferred`` on stored figures, each verdict reached
(holds, does not hold, not measurable here) and its figures equal to a count made here by hand.

Annotation rows are the CSV export's (what ``AnnotationStore.export_rows`` returns); preference results
are files of the stored layout (``cache/preference/<dataset>/<id>.json``) whose pairs carry their
outcomes, recomputed by ``preference.summarise`` as the page does."""
from __future__ import annotations

import pytest

from core.findings import INCONCLUSIVE
from pipeline.findings.agreement import typology_agreement
from pipeline.findings.finding import FAILS, HOLDS, INCONCLUSIVE, UNMEASURABLE, paper_claims
from pipeline.findings.preference import difficulty_aware_preferred
from pipeline.prompting.pairwise import wilson_interval
from tests.pipeline.stored_figures import annotation_rows, write_preference_result

def test_typology_agreement_per_model():
    good, poor, small = "ollama:qwen3:8b [0123456789ab]", "ollama:llama3.2:3b [ba9876543210]", \
        "embedded:smollm2 [feedfeedfeed] (sub-1B model: not a finding)"
    sized = {"backend": "ollama", "model": "m", "parameters_b": 8.0, "size_source": "ollama /api/show"}
    runs = {f"run-{m}": {"provenance": {**sized, "parameters_b": b}, "degenerate": "", "n_unparseable": 0}
            for m, b in ((good, 8.0), (poor, 3.0), (small, 0.135))}
    found = typology_agreement(annotation_rows(good, 100, 95) + annotation_rows(poor, 100, 50)
                               + annotation_rows(small, 100, 100), "store.sqlite", runs)
    parts = {p.scope: p for p in found.parts}
    # by hand: 100 queries x 3 cells; TP = correct, FP = 100 - correct, FN = 0, TN = 200
    assert parts[good].measured["precision"] == pytest.approx(95 / 100)
    assert parts[good].measured["accuracy"] == pytest.approx((95 + 200) / 300) and parts[good].verdict == HOLDS
    assert parts[poor].measured["precision"] == pytest.approx(50 / 100) and parts[poor].verdict == FAILS
    assert "precision 50 of 100 [41.9%, 58.1%] vs > 70.0%: does not hold" in parts[poor].reason
    assert parts[small].verdict == INCONCLUSIVE and "sub-1B model" in parts[small].reason
    assert found.verdict == FAILS  # one model below the paper: never softened by the others
    assert {r["model"] for r in found.rests_on} == {good, poor, small}
    # too few assigned reasons to read a share from
    few = typology_agreement(annotation_rows(good, 5, 5), "store.sqlite", runs)
    assert few.verdict == INCONCLUSIVE and "n = 5 < minimum" in few.reason


def test_difficulty_aware_preferred_per_dataset(tmp_path, monkeypatch):
    """Issue 33: read by the claim's rule (claims file): holds above 50%, does not hold below, inconclusive when
    the interval straddles 50% (6 vs 6 read "does not hold" before), when fewer queries than the rule's minimum
    were decided (5: "not measurable" before) or when the judge's size is unknown."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    write_preference_result(tmp_path, "dl19", ["win"] * 16 + ["tie"] * 2 + ["loss"] * 2)
    write_preference_result(tmp_path, "dl20", ["win"] * 6 + ["loss"] * 6)
    write_preference_result(tmp_path, "dl21", ["win"] * 5)
    write_preference_result(tmp_path, "dl22", ["win"] * 2 + ["loss"] * 16)
    write_preference_result(tmp_path, "unsized", ["win"] * 18, {"backend": "openai", "model": "some-model"})
    found = difficulty_aware_preferred("all")
    parts = {p.scope: p for p in found.parts}
    low, high = wilson_interval(16, 20)
    assert parts["dl19"].measured["rate"] == pytest.approx(0.8) and parts["dl19"].verdict == HOLDS
    assert (parts["dl19"].measured["ci_low"], parts["dl19"].measured["ci_high"]) == pytest.approx((low, high))
    assert parts["dl19"].measured["paper_rate"] == pytest.approx(0.6456)
    assert parts["dl19"].measured["paper_inside_interval"] == (low <= 0.6456 <= high)
    # the verdict reads one-sided 95% Wilson bounds (the 90% interval); the page's 95% interval is kept beside
    assert parts["dl19"].evidence["n"] == 20
    assert parts["dl19"].evidence["interval"] == pytest.approx(list(wilson_interval(16, 20, 0.90)))
    assert "judge: ollama:qwen3:8b [0123456789ab], 8.2B (ollama /api/show)" in parts["dl19"].headline
    assert parts["dl20"].verdict == INCONCLUSIVE and "the interval straddles 50.0%" in parts["dl20"].reason
    # 6 vs 6 sits on 50%: its power says no n decides it
    assert "MDE " in parts["dl20"].headline and "no n decides (the estimate sits on the threshold 50.0%)" in parts["dl20"].headline
    assert parts["dl21"].verdict == INCONCLUSIVE
    assert parts["dl21"].headline.startswith("inconclusive (n = 5 < minimum 10 (decided queries))")
    assert parts["dl22"].verdict == FAILS and "at or below 50.0%" in parts["dl22"].reason
    assert found.verdict == FAILS  # dl22 contradicts the claim: never softened by the others
    assert {r["dataset"] for r in found.rests_on} == {"dl19", "dl20", "dl21", "dl22"}
    (unsized,) = difficulty_aware_preferred("unsized").parts
    assert unsized.verdict == INCONCLUSIVE and "judge is a model of unknown size" in unsized.reason
    assert unsized.evidence["on_its_figures"] == HOLDS  # what its figures alone say, kept beside
    assert found.rule == paper_claims()["difficulty_aware_preferred"]["rule"] and found.rule["min_n"] == 10


def test_the_preference_rates_have_one_source_the_claims_file():
    """The study's rates were a code literal (``preference.STUDY_RATES``) beside the claims file: now only the
    claims file states them, and the page, the CLI and the finding read them from it."""
    from pipeline.findings.preference import paper_rates
    from pipeline.prompting import preference
    from pipeline.views import difficulty_aware_generation as page

    assert not hasattr(preference, "STUDY_RATES")
    assert paper_rates() == paper_claims()["difficulty_aware_preferred"]["rates"]
    assert list(page.study_frame()["study rate"]) == list(paper_rates().values())


def test_reasons_made_by_a_small_model_gate_the_preference_verdict(tmp_path, monkeypatch):
    """The aware answers carry reasons an LLM assigned; under 1B (here from the typology store), that model's
    reasons are no finding either, whatever the judge and generators (left open in stop 38's note)."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    tiny = {"backend": "embedded", "model": "smollm2", "parameters_b": 0.135, "size_source": "GGUF metadata"}
    write_preference_result(tmp_path, "dl19", ["win"] * 18, assignment_report={
        "typology_store": {"h2r": {"run_id": "dl19-h2r", "provenance": tiny}, "model": "embedded:smollm2",
                           "skipped": {}}})
    write_preference_result(tmp_path, "dl20", ["win"] * 18, assignment_report={"imported": "reasons.jsonl"})
    parts = {p.scope: p for p in difficulty_aware_preferred("all").parts}
    assert parts["dl19"].verdict == INCONCLUSIVE and parts["dl19"].evidence["on_its_figures"] == HOLDS
    assert "reasons' model (typology store) is a sub-1B model" in parts["dl19"].reason
    assert any(m.startswith("reasons' model (typology store): embedded:smollm2") for m in parts["dl19"].evidence["models"])
    # issue 40: a reasons FILE whose maker is neither named nor sized counts as a model of unknown size
    assert parts["dl20"].verdict == INCONCLUSIVE and parts["dl20"].evidence["on_its_figures"] == HOLDS
    assert "reasons FILE's maker is a model of unknown size" in parts["dl20"].reason
