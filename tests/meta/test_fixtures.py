"""The reference numbers carried in tests/fixtures/ are the shared ones, with their provenance."""
from __future__ import annotations

import hashlib

from tests.support.paths import FIXTURES


def test_golden_copy_matches_shared(shared_dir):
    shared = shared_dir / "fixtures" / "allrank_golden.json"
    assert (FIXTURES / "allrank_golden.json").read_bytes() == shared.read_bytes()


def test_golden_copy_has_its_provenance(golden):
    digest = hashlib.sha256((FIXTURES / "allrank_golden.json").read_bytes()).hexdigest()
    readme = (FIXTURES / "README.md").read_text()
    assert digest in readme and "allRank 1.4.3" in readme and "c884756" in readme
    assert golden["source"].startswith("allRank 1.4.3") and len(golden["cases"]) == 4
