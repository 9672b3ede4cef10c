"""End to end with the embedded SmolLM2-135M model on three real DL19 queries: both generations, both
judge orders, stored raw verdicts, a summary labelled as a 135M model's, and a rerun that makes no call.

What the 135M model answers is not asserted (it exercises the pipeline; its verdicts are no finding):
the test checks that every stage ran for real and that the bookkeeping is consistent."""
from __future__ import annotations

import pytest

from pipeline.prompting import difficulty, pairwise, preference
from pipeline.typology.categories import Assignment, load_typology
from pipeline.data.datasets import load_dataset
from pipeline.llm import GenerationOptions, ResponseCache, make_client

# hand-assigned study categories for three DL19 queries
REASONS = {"104861": ("h2r", "Numerical data requirements"),  # cost of interior concrete flooring
           "1110199": ("h2r", "Specific product terminology"),  # what is wifi vs bluetooth
           "1129237": ("h2j", "Quantitative data needs")}  # hydrogen is a liquid below what temperature


@pytest.mark.slow
def test_embedded_model_on_three_dl19_queries(tmp_path, shared_dir, embedded_model):
    data = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    typology, templates = load_typology(), difficulty.load_templates()
    assignments = [Assignment(qid, task, [(typology.find(name, task), "")], source="hand")
                   for qid, (task, name) in REASONS.items()]
    config = preference.PreferenceConfig(max_passages=2, passage_chars=300,
                                         generation=GenerationOptions(max_tokens=40))
    model = make_client("embedded:smollm2", cache=ResponseCache(tmp_path / "llm.sqlite"))
    side = preference.AnswerSide(model)
    result = preference.run_preference(data, assignments, typology, templates, model, side, side, config)

    pairs = result["pairs"]
    assert sorted(p["qid"] for p in pairs) == sorted(REASONS)
    for pair in pairs:
        assert all(len(pair["answers"][s].split()) >= 3 for s in ("baseline", "aware")), pair["answers"]
        assert pair["difficulty"] in pair["prompts"]["aware"][-1]["content"]
        assert set(pair["verdicts"]) == {"ab", "ba"}
        assert all(isinstance(v["raw"], str) for v in pair["verdicts"].values())  # raw replies kept
        assert pair["outcome"] in pairwise.OUTCOMES and pair["outcome"] != "failed"
        assert len(pair["passages"]) <= 2 and all(p["grade"] >= 2 for p in pair["passages"])
    overall = result["summary"]["overall"]
    assert overall["wins"] + overall["ties"] + overall["losses"] + overall["unparseable"] == 3
    assert "135M" in overall["judge"] and result["judge"]["small"]

    calls = model.calls_made
    again = preference.run_preference(data, assignments, typology, templates, model, side, side, config)
    assert model.calls_made == calls  # the rerun is served from the response cache
    assert again["summary"] == result["summary"] and again["id"] == result["id"]
