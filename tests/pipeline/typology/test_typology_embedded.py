"""Typology induction end to end with the embedded SmolLM2-135M model on a handful of real queries.

What is checked is the pipeline (reasons, rounds until the stop rule, stored rounds, assignment), not
the quality of a 135M model's categories.
"""
from __future__ import annotations

import pytest

from pipeline.llm import ResponseCache, make_client
from pipeline.typology.induction import HardQuery, InductionConfig
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore

# three DL19 queries (topics.dl19-passage.txt) with a short H2R-style context
QUERIES = [
    HardQuery("1037798", "who is robert gray",
              "Top passages retrieved by bm25:\n[1] (grade 0) Gray is a surname of English origin.\n"
              "[2] (grade 1) Robert Gray was an American sea captain who explored the Pacific Northwest."),
    HardQuery("1063750", "why did the us volunterilay enter ww1",
              "Top passages retrieved by bm25:\n[1] (grade 0) Volunteer programs help communities.\n"
              "[2] (grade 2) The United States entered World War I in April 1917 after German submarine attacks."),
    HardQuery("1106007", "define visceral",
              "Top passages retrieved by bm25:\n[1] (grade 1) Visceral fat is stored in the abdominal cavity.\n"
              "[2] (grade 0) The viscera are the internal organs."),
]


@pytest.mark.slow
def test_embedded_typology_runs_end_to_end_and_stops(tmp_path, embedded_model, monkeypatch):
    # One slot: with parallel slots a greedy answer depends on which requests the engine decoded beside it,
    # which a busy machine's timing changes; the 135M model's typology then came out unreadable now and then
    # ("no round produced a readable typology"). Decoded one at a time in call order, the run is the same on
    # a busy and an idle machine.
    monkeypatch.setenv("IRDASH_LLM_PARALLEL", "1")
    client = make_client("embedded:smollm2", cache=ResponseCache(tmp_path / "llm.sqlite"))
    config = InductionConfig(batch_size=2, max_rounds=3, max_categories=5, reason_tokens=40,
                             typology_tokens=160, assignment_tokens=80)
    with TypologyStore(tmp_path / "typology.sqlite") as store:
        result = run_typology(client, store, dataset="dl19", task="h2r", queries=QUERIES,
                              hard_set={"note": "three DL19 queries, test"}, config=config)
        assert result["status"] == "done"
        assert result["model"]["small"] and result["model"]["backend"] == "embedded"
        assert result["stop_reason"] in ("converged", "max_rounds")
        assert 1 <= result["n_rounds"] <= 3 and len(store.rounds(result["run_id"])) == result["n_rounds"]
        assert result["categories"], "no round gave a readable typology"
        assert all(q["status"] in ("ok", "unparseable") for q in result["queries"])
        assert all(len(q["reason"] or "") > 3 for q in result["queries"])
        calls = client.calls_made
        again = run_typology(client, store, dataset="dl19", task="h2r", queries=QUERIES,
                             hard_set={"note": "three DL19 queries, test"}, config=config, force=True)
    assert client.calls_made == calls  # rerun: every call answered by the response cache
    assert again["categories"] == result["categories"]
