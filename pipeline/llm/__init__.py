"""LLM backends behind one interface, with a response cache (see ``pipeline.llm.base``)."""
from pipeline.llm.base import (ChatClient, GenerationOptions, LLMBackend, LLMError, LLMReply, Message,
                               Provenance, ScriptedBackend)

__all__ = ["ChatClient", "GenerationOptions", "LLMBackend", "LLMError", "LLMReply", "Message", "Provenance",
           "ScriptedBackend"]
