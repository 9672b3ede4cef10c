"""Difficulty-aware retrieval's result id never changes: a stored result is named by it (its file name), and a
rerun of the same configuration replaces its file. The literal below is the reference value of a stored id (of result version 2: issue 40's control rewrite is part of
what defines a result, so version 1's ids, and files, are not carried over)."""
from __future__ import annotations

from pipeline.aware.retrieve import result_id


def test_an_aware_retrieve_result_id_is_the_one_stored_results_carry():
    result = {"dataset": "dl19", "passages_fingerprint": "ab" * 32, "qrels_digest": "0123456789abcdef",
              "index": {"settings": {"k1": 0.9, "b": 0.4, "depth": 1000}, "rm3": {"fb_terms": 10}},
              "rewriter": {"label": "ollama:llama3.2:3b [a80c4f17acd5]", "digest": "a80c4f17acd5"}, "assigner": None,
              "config": {"quantile": 0.25, "max_queries": 10}, "rewrite_options": {"max_tokens": 64},
              "prompt": {"system": "Réécris la requête.", "query_line": "Query: {query}"},
              "templates": {"default": "This query is difficult because of {category}.", "source": "not in the id"},
              "typology": {"name": "study"}, "assignments": {"digest": "0123456789ab"},
              "queries": [{"qid": "104861", "query": "cost of interior concrete flooring",
                           "sentence": "This query requires numerical data.",
                           "control_sentence": "This query is in English.", "ndcg@10": {"original": 0.1}}],
              "seconds": 12.5, "data_source": "data folder /not/in/the/id"}
    assert result_id(result) == "dl19-1db6b23e3c8e"
    # timings, where the data folder is and the measured figures are not what defines it; the model's digest is
    assert result_id({**result, "seconds": 3.0, "data_source": "elsewhere"}) == "dl19-1db6b23e3c8e"
    assert result_id({**result, "rewriter": {**result["rewriter"], "digest": "re-pulled"}}) != "dl19-1db6b23e3c8e"
