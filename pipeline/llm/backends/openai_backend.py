"""OpenAI-compatible chat endpoints (vLLM, llama.cpp server, Ollama's ``/v1``, hosted APIs) through
the official ``openai`` client: how users move generation to a GPU server or cluster.

The API key comes from the ``api_key`` argument, else ``OPENAI_API_KEY``, else ``"EMPTY"`` (local
servers ignore it). The client's own retries are off: :class:`pipeline.llm.client.CachedClient`
retries and records every failed attempt.
"""
from __future__ import annotations

import os
from typing import Sequence

from pipeline.llm.backends.ollama_backend import strip_reasoning
from pipeline.llm.base import GenerationOptions, LLMError, Message, Provenance


class OpenAICompatibleBackend:
    def __init__(self, model: str, base_url: str, api_key: str | None = None, timeout: float = 120.0):
        import openai

        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.provenance = Provenance("openai", model, note=f"OpenAI-compatible server {base_url}")
        self._openai = openai.OpenAI(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
                                     timeout=timeout, max_retries=0)

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> str:
        import openai

        where = f"openai:{self.model}@{self.base_url}"
        try:
            response = self._openai.chat.completions.create(
                model=self.model, messages=[dict(m) for m in messages], temperature=options.temperature,
                seed=options.seed, max_tokens=options.max_tokens)
        except openai.APITimeoutError as exc:
            raise LLMError(f"{where}: no reply within {self.timeout:g} s") from exc
        except openai.APIStatusError as exc:
            retryable = exc.status_code in (408, 429) or exc.status_code >= 500
            detail = " ".join(exc.response.text.split())[:300] or str(exc)
            raise LLMError(f"{where}: server error {exc.status_code}: {detail}",
                           retryable=retryable) from exc
        except openai.APIConnectionError as exc:
            raise LLMError(f"{where}: cannot reach the server: {exc}") from exc
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise LLMError(f"{where}: malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from exc
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError, KeyError) as exc:
            raise LLMError(f"{where}: malformed reply: no choices[0].message.content "
                           f"({type(response).__name__})") from exc
        if not isinstance(content, str):
            raise LLMError(f"{where}: malformed reply: message content is {type(content).__name__}")
        return strip_reasoning(content)
