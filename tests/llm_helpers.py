"""Test helpers for code that talks to a ChatClient."""
from __future__ import annotations

from pipeline.llm.base import LLMError, LLMReply, ScriptedBackend


class _DirectClient:  # TEMPORARY until pipeline.llm.client.CachedClient is merged from the llm branch
    def __init__(self, backend):
        self.backend = backend
        self.provenance = backend.provenance

    def chat(self, messages, options=None):
        return LLMReply(self.backend.complete(messages, options), self.provenance)

    def chat_many(self, requests, options=None, progress=None):
        out = []
        for messages in requests:
            try:
                out.append(self.chat(messages, options))
            except LLMError as exc:
                out.append(exc)
        return out


def scripted_client(respond, tmp_path):
    """A ScriptedBackend behind the real response cache (in ``tmp_path``); ``.backend.calls`` counts calls."""
    try:
        from pipeline.llm.cache import ResponseCache
        from pipeline.llm.client import CachedClient
    except ImportError:
        return _DirectClient(ScriptedBackend(respond))
    return CachedClient(ScriptedBackend(respond), ResponseCache(tmp_path / "llm-cache.sqlite"), retries=0)
