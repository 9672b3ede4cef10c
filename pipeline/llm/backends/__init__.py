"""The three real backends: Ollama (the study's setup), OpenAI-compatible servers, and the embedded
SmolLM2-135M-Instruct model (offline). Each implements :class:`pipeline.llm.base.LLMBackend`."""
from pipeline.llm.backends.embedded import EmbeddedBackend
from pipeline.llm.backends.ollama_backend import (OLLAMA_DEFAULT_HOST, STUDY_MODELS, OllamaBackend,
                                                  list_ollama_models)
from pipeline.llm.backends.openai_backend import OpenAICompatibleBackend

__all__ = ["EmbeddedBackend", "OLLAMA_DEFAULT_HOST", "OllamaBackend", "OpenAICompatibleBackend", "STUDY_MODELS",
           "list_ollama_models"]
