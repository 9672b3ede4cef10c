"""LLM backends behind one interface, with a response cache (see ``pipeline.llm.base``).

``make_client(spec)`` is the entry point (spec grammar in ``pipeline.llm.factory``); it returns a
:class:`CachedClient` over an Ollama, OpenAI-compatible or embedded backend.
"""
from pipeline.llm.base import (ChatClient, Completion, GenerationOptions, LLMBackend, LLMError, LLMReply,
                               LLMUnavailable, Message, Provenance, ScriptedBackend)
from pipeline.llm.cache import ResponseCache
from pipeline.llm.client import CachedClient
from pipeline.llm.factory import make_backend, make_client

__all__ = ["CachedClient", "ChatClient", "Completion", "GenerationOptions", "LLMBackend", "LLMError", "LLMReply",
           "LLMUnavailable", "Message", "Provenance", "ResponseCache", "ScriptedBackend", "make_backend", "make_client"]
