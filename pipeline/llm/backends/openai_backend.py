"""OpenAI-compatible chat endpoints (vLLM, llama.cpp server, Ollama's ``/v1``, hosted APIs) through
the official ``openai`` client: how users move generation to a GPU server or cluster.

The API key comes from the ``api_key`` argument, else ``OPENAI_API_KEY``, else ``"EMPTY"`` (local
servers ignore it). The client's own retries are off: :class:`pipeline.llm.client.CachedClient`
retries and records every failed attempt.

``resolve()`` asks ``/v1/models`` once: a server that does not answer, or does not serve the model,
raises :class:`LLMUnavailable`; the model's entry gives its size where the server reports one
(llama.cpp's ``meta.n_params``; other servers give none, so the size is unknown: :mod:`pipeline.llm.sizes`). The base URL is the model's ``endpoint`` (part of the cache key);
these servers report no weights digest, so the model id and base URL are the identity.
``think`` goes to the server as ``chat_template_kwargs.enable_thinking`` (vLLM, SGLang and the
llama.cpp server read it), except to api.openai.com, which rejects unknown arguments.
"""
from __future__ import annotations

import os
from typing import Sequence

from pipeline.llm.backends import register_backend
from pipeline.llm.base import (Completion, GenerationOptions, LLMBackend, LLMError, LLMUnavailable, Message,
                               Provenance, SpecOptions)
from pipeline.llm.sizes import SOURCE_OPENAI, count_billions, sized

CHECK_TIMEOUT_S = 10.0
HOST_HINT = "start the server, or fix the base URL in openai:MODEL@BASE_URL"


def listed_size(entry) -> float | None:
    """The size a ``/v1/models`` entry reports: llama.cpp's server adds ``meta.n_params`` (a parameter
    count); vLLM, hosted APIs and Ollama's ``/v1`` report none (None: unknown, :mod:`pipeline.llm.sizes`)."""
    meta = (getattr(entry, "model_extra", None) or {}).get("meta") if entry is not None else None
    return count_billions(meta.get("n_params")) if isinstance(meta, dict) else None


@register_backend("openai", order=3, form="openai:MODEL@BASE_URL")
class OpenAICompatibleBackend(LLMBackend):
    """One model on an OpenAI-compatible server. Spec ``openai:MODEL@BASE_URL`` (the key: ``OPENAI_API_KEY``)."""
    default_concurrency = 4  # such servers (vLLM, hosted APIs) batch concurrent requests themselves

    @classmethod
    def from_spec(cls, rest: str, options: SpecOptions) -> "OpenAICompatibleBackend":
        model, _, base_url = rest.partition("@")
        if not model or not base_url:
            raise ValueError(f"LLM spec {options.spec!r}: write openai:MODEL@BASE_URL "
                             f"(e.g. openai:Qwen/Qwen3-8B@http://localhost:8000/v1)")
        return cls(model, base_url, api_key=options.api_key, timeout=options.timeout)

    def rebuild_spec(self) -> str:
        return f"openai:{self.model}@{self.base_url}"  # the key: the worker's OPENAI_API_KEY

    def __init__(self, model: str, base_url: str, api_key: str | None = None, timeout: float = 120.0):
        import openai

        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.provenance = Provenance("openai", model, note=f"OpenAI-compatible server {base_url}", endpoint=base_url)
        self._openai = openai.OpenAI(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
                                     timeout=timeout, max_retries=0)

    def _unavailable(self, exc, **kw) -> LLMUnavailable:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return LLMUnavailable(host=self.base_url, model=self.model, cause=kw.get("timeout_cause", "no answer"),
                                  hint="raise --timeout, lower --concurrency, or check the server's load")
        return LLMUnavailable(host=self.base_url, model=self.model,
                              cause=f"connection refused or host unreachable ({type(exc).__name__})", hint=HOST_HINT)

    def resolve(self) -> None:
        """Check once that the server serves the model (``/v1/models``)."""
        import openai

        try:
            listed = list(self._openai.with_options(timeout=min(self.timeout, CHECK_TIMEOUT_S)).models.list())
            served = [m.id for m in listed]
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise self._unavailable(exc) from exc
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise LLMUnavailable(host=self.base_url, model=self.model, cause=f"HTTP {exc.status_code} on /models",
                                     hint="set OPENAI_API_KEY") from exc
            return  # a server without a model list: the first call tells
        if served and self.model not in served:
            raise LLMUnavailable(host=self.base_url, model=self.model,
                                 cause=f"the server does not serve this model (it serves: {', '.join(served[:20])})",
                                 hint="use one of the served model ids")
        entry = next((m for m in listed if m.id == self.model), None)
        self.provenance = sized(self.provenance, listed_size(entry), SOURCE_OPENAI)

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> Completion:
        import openai

        where = f"openai:{self.model}@{self.base_url}"
        extra = {} if "api.openai.com" in self.base_url else {
            "chat_template_kwargs": {"enable_thinking": bool(options.think)}}
        try:
            response = self._openai.chat.completions.create(
                model=self.model, messages=[dict(m) for m in messages], temperature=options.temperature,
                seed=options.seed, max_tokens=options.max_tokens, extra_body=extra or None)
        except openai.APITimeoutError as exc:
            raise self._unavailable(exc, timeout_cause=f"no reply within {self.timeout:g} s") from exc
        except openai.APIStatusError as exc:
            detail = " ".join(exc.response.text.split())[:300] or str(exc)
            if exc.status_code == 404:
                raise LLMUnavailable(host=self.base_url, model=self.model, cause=f"HTTP 404: {detail}",
                                     hint="check the model id (GET /v1/models lists them)") from exc
            retryable = exc.status_code in (408, 429) or exc.status_code >= 500
            raise LLMError(f"{where}: server error {exc.status_code}: {detail}",
                           retryable=retryable) from exc
        except openai.APIConnectionError as exc:
            raise self._unavailable(exc) from exc
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise LLMError(f"{where}: malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from exc
        try:
            choice = response.choices[0]
            content = choice.message.content
        except (AttributeError, IndexError, TypeError, KeyError) as exc:
            raise LLMError(f"{where}: malformed reply: no choices[0].message.content "
                           f"({type(response).__name__})") from exc
        if content is None and getattr(choice, "finish_reason", None) == "length":
            content = ""  # cut off before any content: the client reports it as truncated
        if not isinstance(content, str):
            raise LLMError(f"{where}: malformed reply: message content is {type(content).__name__}")
        return Completion(content, getattr(choice, "finish_reason", None))
