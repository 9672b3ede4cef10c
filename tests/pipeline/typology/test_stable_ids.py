"""A typology run's id never changes: a rerun of the same induction finds its stored run by it. The
literals below were computed by the code before the digest moved to ``core.digest``; they are
reference values of stored ids and must never change."""
from __future__ import annotations

from pipeline.typology.categories import Category
from pipeline.typology.store import run_id_for


def test_a_typology_run_id_is_the_one_stored_runs_carry():
    common = dict(dataset="dl19", task="generation", hard_set={"quantile": 0.25, "rule": "bottom", "n": 12},
                  provenance={"backend": "ollama", "model": "qwen3:8b", "endpoint": "ignored", "label": "ignored"},
                  config={"rounds": 3, "temperature": 0.0, "max_categories": 8}, qids={"1037798", "104861", "19335"})
    assert run_id_for(**common) == "dl19-generation-cc0219418f79"
    imported = [Category("Ambiguïté", "La requête a deux sens – «homonymes»"), Category("Rare terms")]
    assert run_id_for(**common, imported=imported) == "dl19-generation-5bc17ac8befd"
