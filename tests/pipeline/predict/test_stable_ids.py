"""A stored prediction's id carries the digest of its datasets and settings: it must not change (the
page and the CLI name results by it). The literals below were computed by the code before the digest
moved to ``core.digest``; they are reference values of stored ids and must never change."""
from __future__ import annotations

import re
from pathlib import Path

from pipeline.predict.store import new_id


def test_a_prediction_id_carries_the_digest_stored_results_carry():
    document = {"datasets": ["dl19", "dl20"],
                "settings": {"predictors": ("clarity", "llm:embedded"), "folds": 5, "quantile": 0.25,
                             "study": Path("/cache/failure/dl19/studies/x.json"), "note": "données"},
                "results": {"ignored": True}}
    stamp, digest, _ = re.fullmatch(r"(\d{8}T\d{6}Z)-([0-9a-f]{8})-([0-9a-f]{4})", new_id(document, now=0.0)).groups()
    assert (stamp, digest) == ("19700101T000000Z", "927aa9e9")
