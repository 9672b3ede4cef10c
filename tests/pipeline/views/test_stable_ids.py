"""The Difficulty-aware generation page groups stored results by their configuration label, whose
template digest and trailing digest must not change between releases (a bookmarked comparison keeps
its name). The literals below were computed by the code before the digest moved to ``core.digest``;
they are reference values and must never change."""
from __future__ import annotations

from pipeline.views.difficulty_aware_generation import configuration_label, configuration_of

RESULT = {"dataset": "dl19", "judge": {"label": "ollama:qwen3:8b"},
          "generators": {"baseline": {"label": "embedded:smollm2"}, "aware": {"label": "embedded:smollm2 «aware»"}},
          "config": {"max_queries": 20, "reason_mode": "all", "temperature": 0.0},
          "typology": {"name": "Typologie été"},
          "templates": {"generation": "Cette requête est difficile : {reason}.", "source": "ignored.json"},
          "assignments": {"sources": ["typology run dl19-generation-abc", "imported: hand.jsonl"]}}


def test_the_configuration_digests_are_the_ones_stored_results_were_grouped_by():
    assert configuration_of(RESULT)["templates"] == "3171dceb"
    assert configuration_label(RESULT) == "judge ollama:qwen3:8b · baseline embedded:smollm2 · aware embedded:smollm2 «aware» · all reason(s) · max 20 queries · typology Typologie été · templates 3171dceb [846277]"
