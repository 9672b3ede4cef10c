"""Difficulty-aware retrieval end to end with the embedded SmolLM2-135M model on two real DL19 H2R queries: the
model assigns their reasons and writes both rewrites, every arm is searched and scored, the result is labelled
not a finding, and a rerun makes no call. What the 135M model writes is not asserted (it exercises the pipeline)."""
from __future__ import annotations

import pytest

from pipeline.aware import retrieve
from pipeline.data.datasets import load_dataset
from pipeline.llm import ResponseCache, make_client
from pipeline.prompting.difficulty import load_templates
from pipeline.retrieval import bm25
from pipeline.typology.categories import STUDY_FILE


@pytest.mark.slow
def test_embedded_model_on_dl19_h2r_queries(tmp_path, shared_dir, embedded_model):
    data = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    model = make_client("embedded:smollm2", cache=ResponseCache(tmp_path / "llm.sqlite"))
    config = retrieve.RetrieveConfig(max_queries=2)
    index = bm25.build_index(data.passages, fingerprint=data.passages_fingerprint)

    def run() -> dict:
        h2r = retrieve.original_h2r(data, index, config)
        typology, assignments, how = retrieve.h2r_reasons(data, h2r[2].qids, STUDY_FILE, assigner=model,
                                                          max_queries=config.max_queries)
        return retrieve.run_aware_retrieve(data, h2r, assignments, typology, load_templates(), model, config, index,
                                           assigner=model.provenance, reasons_report=how)

    result = run()
    assert result["corpus"]["judged_pool_complete"] and not result["corpus"]["partial_corpus"]
    assert len(result["h2r"]["qids"]) == 11  # floor(42 * 0.25) + 1 of DL19's 43 judged queries
    asked = result["reasons_report"]["asked"]
    assert asked == [q for q in data.judged_qids if q in result["h2r"]["qids"]][:2]
    assert len(result["excluded"]["over max_queries"]) == 9
    assert result["queries"], "the model named no H2R reason for either query"
    for u in result["queries"]:
        assert u["qid"] in asked and u["sentence"] in u["prompts"]["aware_rewrite"][-1]["content"]
        assert set(u["ndcg@10"]) == set(retrieve.ARMS) and set(u["top"]) == set(retrieve.ARMS)
        assert all(len(u["top"][arm]) == 10 for arm in retrieve.ARMS)  # every arm retrieved from the index
        assert u["rm3_terms"]  # RM3 ran with its feedback terms
        assert u["ndcg@10"]["original"] <= result["h2r"]["boundary"]
        for arm in retrieve.REWRITES:
            record = u["rewrites"][arm]
            assert record["status"] in ("ok", "unusable", "failed")
            assert record["searched"] == (record["query"] if record["status"] == "ok" else u["query"])
    assert result["rewriter"]["small"] and result["gates"]["rewriter"] and result["gates"]["assigner"]
    assert all(part["verdict"] == "inconclusive" and any("sub-1B" in why for why in
                                                         part["evidence"]["inconclusive_because"])
               for part in result["verdicts"].values())

    calls = model.calls_made
    again = run()
    assert model.calls_made == calls  # assignment and both rewrites served from the response cache
    assert again["id"] == result["id"] and again["comparisons"] == result["comparisons"]
