"""Ollama through the official ``ollama`` Python client: the study's setup (llama3.2:3b, qwen3:8b).

The server is ``OLLAMA_HOST`` (default ``http://127.0.0.1:11434``). Decoding options map to Ollama's
``temperature``, ``seed``, ``num_predict`` and ``num_ctx``; ``think`` is sent with every request (off
unless the options turn it on), so a reasoning model such as qwen3 answers instead of spending the
budget on reasoning. ``keep_alive`` (how long the server keeps the model loaded) is a session
setting, not part of the answer's cache key.

``resolve()`` asks ``/api/tags`` once, before the first call: the model's digest (part of the cache
key: a re-pulled tag is a new model) and whether the server has the model at all; then ``/api/show``
for the model's size (``details.parameter_size``; unknown when it reports none: :mod:`pipeline.llm.sizes`). A server that
refuses the connection or does not answer, or lacks the model, raises :class:`LLMUnavailable` naming
host, model, cause and what to do.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Sequence

from pipeline.llm.backends import register_backend
from pipeline.llm.base import (Completion, GenerationOptions, LLMBackend, LLMError, LLMUnavailable, Message,
                               Provenance, SpecOptions)
from pipeline.llm.sizes import SOURCE_OLLAMA, reported_billions, sized
from pipeline.llm.replies import strip_reasoning  # noqa: F401  (re-exported: older imports use this path)

OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"
STUDY_MODELS = ("llama3.2:3b", "qwen3:8b")  # the failure study's generators, in its order
CHECK_TIMEOUT_S = 5.0  # the model check before the first call: a live server answers /api/tags at once
HOST_HINT = "start `ollama serve` there, or point OLLAMA_HOST (or ollama:MODEL@HOST) at a running server"


def ollama_host(host: str | None = None) -> str:
    return host or os.environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT_HOST


def _client(host: str | None, timeout: float):
    import ollama

    return ollama.Client(host=ollama_host(host), timeout=timeout)


def _cause(exc: BaseException) -> str:
    """A short cause for an unreachable server: connection refused, timeout, or the exception."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return f"no answer ({type(exc).__name__})"
    if isinstance(exc, ConnectionError) or isinstance(exc, httpx.ConnectError):
        return "connection refused or host unreachable"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


def ollama_models(host: str | None = None, timeout: float = CHECK_TIMEOUT_S, *,
                  model: str = "(model list)") -> dict[str, str]:
    """``{model name: digest}`` the server offers (``/api/tags``); :class:`LLMUnavailable` (naming
    ``model``, the one wanted) when no Ollama server answers."""
    try:
        listing = _client(host, timeout).list()
        return {m.model: m.digest or "" for m in listing.models if m.model}
    except Exception as exc:  # connection refused, timeout, not an Ollama server, malformed body
        raise LLMUnavailable(host=ollama_host(host), model=model, cause=_cause(exc),
                             hint=HOST_HINT) from exc


def list_ollama_models(host: str | None = None, timeout: float = 3.0) -> list[str]:
    """Model names the server offers, sorted; raises :class:`LLMUnavailable` when no server answers."""
    return sorted(ollama_models(host, timeout))


def model_capabilities(model: str, host: str | None = None, timeout: float = CHECK_TIMEOUT_S) -> dict:
    """``{"chat": bool, "why": str}`` from ``/api/show``: whether ``model`` can chat. Ollama lists its
    capabilities (``completion``, ``embedding``, ...); older servers give only the model families,
    where a BERT family means an embedding model."""
    try:
        shown = _client(host, timeout).show(model)
    except Exception as exc:  # noqa: BLE001 - the caller skips a model it cannot inspect
        return {"chat": False, "why": f"/api/show failed: {_cause(exc)}"}
    capabilities = list(shown.capabilities or [])
    if capabilities:
        return {"chat": "completion" in capabilities, "why": f"capabilities {', '.join(capabilities)}"}
    details = shown.details
    families = [*(details.families or []), details.family or ""] if details is not None else []
    if any("bert" in (f or "").lower() for f in families):
        return {"chat": False, "why": f"families {', '.join(f for f in families if f)} (an embedding model)"}
    return {"chat": True, "why": "no capabilities listed; not an embedding family"}


def model_size(model: str, host: str | None = None, timeout: float = CHECK_TIMEOUT_S) -> tuple[float | None, str]:
    """``(billions, why unknown)`` from ``/api/show``'s ``details.parameter_size`` ("494.03M" -> 0.49403,
    "8.0B" -> 8.0); ``(None, why)`` when the server reports none, or one that cannot be read, or the
    call fails (the size is then unknown, never guessed: :mod:`pipeline.llm.sizes`)."""
    try:
        shown = _client(host, timeout).show(model)
    except Exception as exc:  # noqa: BLE001 - the model was listed; an unknown size gates its output
        return None, f"/api/show failed: {_cause(exc)}"
    reported = getattr(shown.details, "parameter_size", None) if shown.details is not None else None
    value = reported_billions(reported)
    if value is None:
        return None, (f"/api/show reports an unreadable parameter_size {reported!r}" if reported else
                      "/api/show reports no parameter_size")
    return value, ""


def _canonical(model: str) -> str:
    return model if ":" in model else f"{model}:latest"  # Ollama's implicit tag


@register_backend("ollama", order=2, form="ollama[:MODEL[@HOST]]")
class OllamaBackend(LLMBackend):
    """One model on one Ollama server. Spec ``ollama[:MODEL[@HOST]]`` (the model name may itself contain ':')."""

    def __init__(self, model: str = STUDY_MODELS[0], host: str | None = None, timeout: float = 120.0,
                 keep_alive: str | float | None = None):
        self.model = model
        self.host = ollama_host(host)
        self.timeout = timeout
        self.keep_alive = keep_alive
        self.provenance = Provenance("ollama", model, note=f"Ollama server {self.host}", endpoint=self.host)
        self._ollama = _client(self.host, timeout)

    @classmethod
    def from_spec(cls, rest: str, options: SpecOptions) -> "OllamaBackend":
        model, _, host = rest.partition("@")
        return cls(model or STUDY_MODELS[0], host=host or None, timeout=options.timeout, keep_alive=options.keep_alive)

    def rebuild_spec(self) -> str:
        return f"ollama:{self.model}@{self.host}"

    def resolve(self) -> None:
        """Check once that the server has the model and record its digest (see the module docstring)."""
        models = ollama_models(self.host, min(self.timeout, CHECK_TIMEOUT_S), model=self.model)
        digests = {_canonical(name): digest for name, digest in models.items()}
        if _canonical(self.model) not in digests:
            have = ", ".join(sorted(models)) or "none"
            raise LLMUnavailable(host=self.host, model=self.model, cause=f"the server has no such model (it has: {have})",
                                 hint=f"ollama pull {self.model}")
        self.provenance = replace(self.provenance, digest=digests[_canonical(self.model)])
        parameters_b, unknown = model_size(self.model, self.host, min(self.timeout, CHECK_TIMEOUT_S))
        self.provenance = sized(self.provenance, parameters_b, SOURCE_OLLAMA)
        if unknown:
            self.provenance = replace(self.provenance, note=f"{self.provenance.note}; size unknown: {unknown}")

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> Completion:
        import httpx
        import ollama
        import pydantic

        where = f"ollama:{self.model}@{self.host}"
        model_options = {"temperature": options.temperature, "seed": options.seed, "num_predict": options.max_tokens}
        if options.num_ctx:
            model_options["num_ctx"] = options.num_ctx
        try:
            response = self._ollama.chat(model=self.model, messages=[dict(m) for m in messages],
                                         options=model_options, think=options.think, keep_alive=self.keep_alive)
            content = response.message.content
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise LLMUnavailable(host=self.host, model=self.model, cause=f"not found: {exc.error}",
                                     hint=f"ollama pull {self.model}") from exc
            # other 4xx (bad request) will not get better by retrying; 429 and 5xx may
            retryable = exc.status_code in (-1, 408, 429) or exc.status_code >= 500
            raise LLMError(f"{where}: server error: {exc}", retryable=retryable) from exc
        except httpx.TimeoutException as exc:
            raise LLMUnavailable(host=self.host, model=self.model, cause=f"no reply within {self.timeout:g} s",
                                 hint="raise --timeout, lower --concurrency, or check the server's load") from exc
        except (ConnectionError, httpx.TransportError) as exc:
            raise LLMUnavailable(host=self.host, model=self.model, cause=_cause(exc), hint=HOST_HINT) from exc
        except (json.JSONDecodeError, pydantic.ValidationError, ValueError, AttributeError) as exc:
            raise LLMError(f"{where}: malformed reply: {type(exc).__name__}: {str(exc)[:200]}") from exc
        if content is None:
            raise LLMError(f"{where}: malformed reply: no message content")
        return Completion(content, getattr(response, "done_reason", None))

