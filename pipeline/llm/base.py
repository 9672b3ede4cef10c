"""The LLM contract every failure-study step codes against (generation, judging, typology, preference).

Two layers:

* an :class:`LLMBackend` talks to one model (Ollama, an OpenAI-compatible server, the embedded GGUF,
  or a scripted stand-in in tests) and returns the raw completion text for chat ``messages``;
* a :class:`ChatClient` is what analysis code receives: a backend behind the response cache
  (``pipeline.llm.cache``), so that a rerun makes no call and a failed call is never cached as an
  answer. Its :attr:`ChatClient.provenance` says which backend and model produced an answer, and
  whether that model is small enough that its output only exercises the pipeline.

Messages are OpenAI/Ollama style: ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Protocol, Sequence, runtime_checkable

Message = dict[str, str]


class LLMError(RuntimeError):
    """A call failed (server error, timeout, malformed reply); never cached as an answer.

    ``retryable`` is False for failures a retry cannot fix (an unknown model, a refused request):
    the client then gives up at once instead of backing off.
    """

    def __init__(self, message: str, *, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class GenerationOptions:
    """Decoding options; part of the response-cache key. The study decodes greedily (temperature 0)."""
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 256
    # Structured output: a JSON schema (canonical JSON text, so the options stay hashable) the reply
    # must satisfy. Backends that can constrain decoding (llama.cpp) make other replies impossible;
    # the others ignore it and the step's parser still checks the reply.
    json_schema: str | None = None
    # > 0: the reply is a JSON object {"content": text, "tokens": [generated token, ...], "top_logprobs":
    # [{token: logprob, ...} per generated token]} with this many alternatives per token. Only backends
    # with ``supports_logprobs = True`` are asked for them.
    top_logprobs: int = 0

    def as_dict(self) -> dict:
        # the newer fields only when set, so requests made without them keep their cache keys
        out = asdict(self)
        for name in ("json_schema", "top_logprobs"):
            if not out[name]:
                del out[name]
        return out


def json_schema_text(schema: dict) -> str:
    """A schema as :attr:`GenerationOptions.json_schema` wants it: compact JSON, keys in the given
    order (not sorted: constrained decoders generate properties in schema order, so order matters)."""
    import json

    return json.dumps(schema, separators=(",", ":"))


@dataclass(frozen=True)
class Provenance:
    """Which model produced an output. ``small`` marks models whose output is never a finding."""
    backend: str  # "ollama" | "openai" | "embedded" | "imported" | "scripted"
    model: str
    small: bool = False
    note: str = ""  # e.g. "SmolLM2-135M-Instruct: a 135M model; its output exercises the pipeline, not a finding"

    @property
    def label(self) -> str:
        text = f"{self.backend}:{self.model}"
        return f"{text} (135M-class model: not a finding)" if self.small else text

    def as_dict(self) -> dict:
        return {**asdict(self), "label": self.label}


@dataclass(frozen=True)
class LLMReply:
    text: str
    provenance: Provenance
    cached: bool = False
    seconds: float = 0.0  # wall time of the underlying call (0 for a cache hit)


@runtime_checkable
class LLMBackend(Protocol):
    provenance: Provenance

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> str:
        """The model's reply text; raises :class:`LLMError` on failure."""


@runtime_checkable
class ChatClient(Protocol):
    provenance: Provenance

    def chat(self, messages: Sequence[Message], options: GenerationOptions | None = None) -> LLMReply:
        ...

    def chat_many(self, requests: Sequence[Sequence[Message]], options: GenerationOptions | None = None,
                  progress: str | None = None) -> list[LLMReply | LLMError]:
        """Answer many requests (concurrently where the backend allows); a failed one comes back as
        its :class:`LLMError` in its slot, so one failure never loses the others."""


@dataclass
class ScriptedBackend:
    """A deterministic stand-in for tests: ``respond(messages) -> text`` (raise LLMError to fail)."""
    respond: Callable[[Sequence[Message]], str]
    provenance: Provenance = field(default_factory=lambda: Provenance("scripted", "scripted"))
    calls: list = field(default_factory=list)

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> str:
        self.calls.append(list(messages))
        return self.respond(messages)
