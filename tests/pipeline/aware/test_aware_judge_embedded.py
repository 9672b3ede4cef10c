"""Difficulty-aware judging end to end with the embedded SmolLM2-135M model on eight real DL19 queries (two
pairs each): the baseline, the reason assignment, both arms and the comparisons all ran, the result is
labelled as not a finding, and a rerun makes no call. What the 135M model answers is not asserted (it
exercises the pipeline; its labels are no finding): the test checks the bookkeeping is consistent."""
from __future__ import annotations

import pytest

from core.findings import INCONCLUSIVE
from pipeline.aware import judge as study
from pipeline.data.datasets import load_dataset
from pipeline.llm import ResponseCache, make_client
from pipeline.prompting import difficulty
from pipeline.typology.categories import load_typology


@pytest.mark.slow
def test_embedded_model_on_eight_dl19_queries(tmp_path, shared_dir, embedded_model):
    data = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    model = make_client("embedded:smollm2", cache=ResponseCache(tmp_path / "llm.sqlite"))
    config = study.AwareJudgeConfig(cap=2, max_queries=8)
    run = lambda: study.run_aware_judge(data, model, load_typology(), difficulty.load_templates(), config,  # noqa: E731
                                        assigner=model)
    result = run()

    assert result["universe"] == data.judged_qids[:8]
    assert result["counts"]["baseline"]["pairs"] == 16  # every stage ran: baseline over 8 queries x 2 pairs
    assert result["reasons"]["how"]["assigned_by"]["model"] == model.provenance.model  # reasons assigned here
    rejudged = [r["qid"] for r in result["queries"]]
    assert rejudged and all(result["counts"][arm]["pairs"] == 2 * len(rejudged)
                            for arm in ("aware", "control_sentence"))
    for record in result["queries"]:
        assert all(p["raw"]["aware"] is not None or p["errors"] for p in record["pairs"])  # raw replies kept
        assert len(record["control_sentence"].split()) == len(record["sentence"].split())
    assert result["example"]["prompts"]["aware"] != result["example"]["prompts"]["baseline"]
    # the 135M model's output is not a finding: every verdict says so
    assert result["gates"] and all("sub-1B" in g for g in result["gates"])
    assert result["verdicts"] and all(v["verdict"] == INCONCLUSIVE for v in result["verdicts"])
    assert all(any("sub-1B" in b for b in v["evidence"]["inconclusive_because"]) for v in result["verdicts"])

    calls = model.calls_made
    again = run()
    assert model.calls_made == calls  # the rerun is served from the response cache
    assert again["id"] == result["id"] and again["comparisons"] == result["comparisons"]
