"""Fixtures of the study tests."""
from __future__ import annotations

import pytest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private cache folder (studies, LLM responses, jobs) for the test; yields its path."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
