"""Fixtures the pipeline tests share: a loopback server speaking Ollama's and OpenAI's chat APIs, and the
planted DL19 study (``tests.pipeline.planted_study``), built once per session in a cache of its own and
copied into each test's own cache, so a test's store holds exactly the studies it planted."""
from __future__ import annotations

import os

import pytest

from tests.support.loopback_llm import LoopbackLLMServer
from tests.support.paths import SHARED


@pytest.fixture
def server():
    """A fresh :class:`~tests.support.loopback_llm.LoopbackLLMServer` per test (its request log starts empty)."""
    with LoopbackLLMServer() as running:
        yield running


@pytest.fixture(scope="session")
def planted_dl19(tmp_path_factory):
    """``{"study", "reference", "data"}`` of the planted DL19 study (skips without ../shared)."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (the planted study reads DL19 from it)")
    from tests.pipeline.planted_study import run_planted_study

    previous = os.environ.get("IRDASH_CACHE_DIR")
    os.environ["IRDASH_CACHE_DIR"] = str(tmp_path_factory.mktemp("planted-cache"))
    try:
        return run_planted_study(SHARED, tmp_path_factory.mktemp("planted-data"))
    finally:
        if previous is None:
            os.environ.pop("IRDASH_CACHE_DIR", None)
        else:
            os.environ["IRDASH_CACHE_DIR"] = previous


@pytest.fixture
def planted_cache(planted_dl19, tmp_path, monkeypatch):
    """A fresh cache holding only the planted study; yields ``planted_dl19``."""
    from pipeline.study.store import save_study

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    save_study(planted_dl19["study"])
    return planted_dl19
