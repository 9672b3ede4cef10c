"""Test helpers for code that talks to a ChatClient."""
from __future__ import annotations

from pipeline.llm.base import ScriptedBackend
from pipeline.llm.cache import ResponseCache
from pipeline.llm.client import CachedClient


def scripted_client(respond, tmp_path) -> CachedClient:
    """A ScriptedBackend behind the real response cache (in ``tmp_path``); ``.backend.calls`` counts calls."""
    return CachedClient(ScriptedBackend(respond), ResponseCache(tmp_path / "llm-cache.sqlite"), retries=0)
