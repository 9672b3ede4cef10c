"""Difficulty-aware generation's ids never change: a stored preference result is named by its result id
and records the digest of its imported answers and of its assignments. The literals below were
computed by the code before the digest moved to ``core.digest``; they are reference values of stored
ids and must never change."""
from __future__ import annotations

from pipeline.prompting.difficulty import assignments_digest
from pipeline.prompting.preference import AnswerSide, result_id
from pipeline.typology.categories import Assignment, Category


def test_the_digest_of_imported_answers_is_the_one_stored_results_carry():
    side = AnswerSide(imported={"1037798": "Le café est une boisson – «noire»", "104861": "rain 雨"},
                      imported_from="answers.jsonl")
    assert side.provenance["digest"] == "8ac364f3793e"


def test_the_assignments_digest_is_the_one_stored_results_carry():
    assignments = [Assignment("104861", "generation", [(Category("Ambiguïté", "deux sens"), "why")]),
                   Assignment("1037798", "retrieval", [(Category("Rare terms"), ""), (Category("Long query"), "")])]
    assert assignments_digest(assignments) == "7d98a70b1cb5"


def test_a_preference_result_id_is_the_one_stored_results_carry():
    result = {"dataset": "dl19", "judge": {"label": "ollama:qwen3:8b", "digest": "500a1f067a9f"},
              "generators": {"baseline": {"label": "embedded:smollm2"}, "aware": {"label": "embedded:smollm2"}},
              "config": {"max_queries": 20, "reason_mode": "first", "temperature": 0.0},
              "prompts": {"baseline": "Answer the question.", "aware": "Réponds à la question."},
              "typology": {"name": "typology runs dl19-generation-abc"},
              "templates": {"generation": "This query is hard because {reason}.", "source": "not in the id"},
              "assignments": {"digest": "0123456789ab", "sources": ["typology run x"]},
              "pairs": [{"qid": "104861", "task": "generation", "winner": "aware"},
                        {"qid": "1037798", "task": "retrieval", "winner": "baseline"}],
              "timings": {"seconds": 12.5}}
    assert result_id(result) == "dl19-564ab0b0ff26"
