"""The LLM layer: one chat interface, its backends, and a content-keyed response cache (``base``, ``cache``).

``make_client(spec)`` is the entry point: it returns a :class:`CachedClient` over an Ollama,
OpenAI-compatible or embedded backend; the spec grammar, and where a new backend is added, are in
``pipeline.llm.specs``. ``cpu`` sets the torch threads of the in-process models.
Every stage may import this package; it imports only ``core`` (and, in a Ray worker, nothing of the stages).
"""
from pipeline.llm.base import (ChatClient, Completion, GenerationOptions, LLMBackend, LLMError, LLMReply,
                               LLMUnavailable, Message, Provenance, ScriptedBackend)
from pipeline.llm.cache import ResponseCache
from pipeline.llm.client import CachedClient
from pipeline.llm.specs import make_backend
from pipeline.llm.factory import make_client

__all__ = ["CachedClient", "ChatClient", "Completion", "GenerationOptions", "LLMBackend", "LLMError", "LLMReply",
           "LLMUnavailable", "Message", "Provenance", "ResponseCache", "ScriptedBackend", "make_backend", "make_client"]
