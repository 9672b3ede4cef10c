"""A study's id and its components' file names never change: stored studies and generated answers are
found by them. The literals below were computed by the code before the digest moved to
``core.digest``; they are reference values of stored ids and must never change."""
from __future__ import annotations

import re
from pathlib import Path

from pipeline.study import store
from pipeline.study.components import identity, identity_digest


def test_a_component_identity_digest_is_the_one_stored_file_names_carry():
    ollama = identity({"backend": "ollama", "model": "qwen3:8b", "endpoint": "http://gpu-host:11434",
                       "digest": "500a1f067a9f", "label": "ignored", "small": False})
    imported = identity({"backend": "imported", "model": "réponses"}, source="answers/réponses-été.jsonl")
    assert identity_digest(ollama) == "52a1c396"
    assert identity_digest(imported) == "4954b955"


CONFIGURATION = {"dataset": "dl19", "data_dir": Path("/data/trec-dl"), "retrievers": ["bm25", "r=runs/été.txt"],
                 "generators": ["embedded"], "judges": ["ollama:qwen3:8b@http://gpu-host:11434"],
                 "setups": ("binary", "graded"), "quantile": 0.25, "cap": 4, "max_queries": None,
                 "options": {"b": 0.4, "k1": 0.9}}


def test_a_study_configuration_digest_is_the_one_stored_study_ids_carry():
    # default=str: the Path enters as its text; the tuple as a JSON list; "é" as \\u00e9
    assert store.configuration_digest(CONFIGURATION) == "e4c34087"
    stamp, digest, nonce = re.fullmatch(r"(\d{8}T\d{6}Z)-([0-9a-f]{8})-([0-9a-f]{4})",
                                        store.new_study_id(CONFIGURATION, now=0.0)).groups()
    assert (stamp, digest) == ("19700101T000000Z", "e4c34087")
