"""Fixtures of the LLM client tests: one loopback server per module, a response cache per test."""
from __future__ import annotations

import pytest

from pipeline.llm import ResponseCache
from tests.support.loopback_llm import LoopbackLLMServer


@pytest.fixture(scope="module")
def server():
    """One :class:`~tests.support.loopback_llm.LoopbackLLMServer` for the whole module (a module's tests
    count the requests they send, not the log's length)."""
    with LoopbackLLMServer() as running:
        yield running


@pytest.fixture
def cache(tmp_path):
    """An empty SQLite response cache of the test's own."""
    return ResponseCache(tmp_path / "responses.sqlite")
