"""Ollama through the official ``ollama`` Python client: the study's setup (llama3.2:3b, qwen3:8b).

The server is ``OLLAMA_HOST`` (default ``http://127.0.0.1:11434``). Decoding options map to Ollama's
``temperature``, ``seed`` and ``num_predict``. A reasoning model's ``<think>...</think>`` block is
removed from the answer (the study scores the answer, not the reasoning).
"""
from __future__ import annotations

import json
import os
import re
from typing import Sequence

from pipeline.llm.base import GenerationOptions, LLMError, Message, Provenance

OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"
STUDY_MODELS = ("llama3.2:3b", "qwen3:8b")  # the failure study's generators, in its order
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


def ollama_host(host: str | None = None) -> str:
    return host or os.environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT_HOST


def _client(host: str | None, timeout: float):
    import ollama

    return ollama.Client(host=ollama_host(host), timeout=timeout)


def list_ollama_models(host: str | None = None, timeout: float = 3.0) -> list[str]:
    """Model names the server offers; raises :class:`LLMError` when no Ollama server answers."""
    try:
        listing = _client(host, timeout).list()
        return sorted(m.model for m in listing.models if m.model)
    except Exception as exc:  # connection refused, timeout, not an Ollama server, malformed body
        raise LLMError(f"no Ollama server at {ollama_host(host)}: {type(exc).__name__}: {exc}") from exc


def strip_reasoning(text: str) -> str:
    return _THINK.sub("", text).strip()


class OllamaBackend:
    """One model on one Ollama server."""

    def __init__(self, model: str = STUDY_MODELS[0], host: str | None = None, timeout: float = 120.0):
        self.model = model
        self.host = ollama_host(host)
        self.timeout = timeout
        self.provenance = Provenance("ollama", model, note=f"Ollama server {self.host}")
        self._ollama = _client(self.host, timeout)

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> str:
        import httpx
        import ollama
        import pydantic

        where = f"ollama:{self.model}@{self.host}"
        try:
            response = self._ollama.chat(
                model=self.model, messages=[dict(m) for m in messages],
                options={"temperature": options.temperature, "seed": options.seed,
                         "num_predict": options.max_tokens})
            content = response.message.content
        except ollama.ResponseError as exc:
            # 4xx (unknown model, bad request) will not get better by retrying; 429 and 5xx may
            retryable = exc.status_code in (-1, 408, 429) or exc.status_code >= 500
            raise LLMError(f"{where}: server error: {exc}", retryable=retryable) from exc
        except httpx.TimeoutException as exc:
            raise LLMError(f"{where}: no reply within {self.timeout:g} s") from exc
        except (ConnectionError, httpx.TransportError) as exc:
            raise LLMError(f"{where}: cannot reach the server: {exc}") from exc
        except (json.JSONDecodeError, pydantic.ValidationError, ValueError, AttributeError) as exc:
            raise LLMError(f"{where}: malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from exc
        if content is None:
            raise LLMError(f"{where}: malformed reply: no message content")
        return strip_reasoning(content)
