"""The LLM contract every failure-study step codes against (generation, judging, typology, preference).

Two layers:

* an :class:`LLMBackend` talks to one model (Ollama, an OpenAI-compatible server, the embedded GGUF,
  or a scripted stand-in in tests) and returns the raw completion text for chat ``messages``; its
  optional hooks (batching, model check, loading, timeout policy) are base-class defaults;
* a :class:`ChatClient` is what analysis code receives: a backend behind the response cache
  (``pipeline.llm.cache``), so that a rerun makes no call and a failed call is never cached as an
  answer. Its :attr:`ChatClient.provenance` says which backend and model produced an answer, and
  whether that model is small enough that its output only exercises the pipeline.

Messages are OpenAI/Ollama style: ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Callable, Mapping, Sequence

Message = dict[str, str]
# How every label, note and page warning names a small model (``Provenance.small``: under 1B
# parameters, such as the tests' SmolLM2-135M and the 0.5B Qwen2.5-Coder). The 1.5B default is not
# small: its note states its size and how it judged on the benchmark sample instead.
SMALL_MODEL = "sub-1B model"


class LLMError(RuntimeError):
    """A call failed (server error, timeout, malformed, empty or truncated reply); never cached as an answer.

    ``retryable`` is False for failures a retry cannot fix (an unknown model, a refused request, an
    empty reply at temperature 0): the client then gives up at once instead of backing off.
    """

    def __init__(self, message: str, *, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable


class LLMUnavailable(LLMError):
    """The model cannot be reached at all: the server refuses the connection, does not answer in time,
    or does not have the model. Retrying the step's other requests is pointless, so clients raise this
    at once (``chat_many`` too, instead of returning it per slot) and a step that gets it stops and
    writes no result. ``host``, ``model`` and ``cause`` name what failed; ``hint`` says what to do.
    """

    def __init__(self, *, host: str, model: str, cause: str, hint: str = ""):
        self.host, self.model, self.cause, self.hint = host, model, cause, hint
        super().__init__(f"{model} at {host}: {cause}" + (f" ({hint})" if hint else ""), retryable=False)

    def __reduce__(self):  # keyword-only __init__: pickle (Ray) by the attributes
        return _unavailable, (self.host, self.model, self.cause, self.hint)


def _unavailable(host: str, model: str, cause: str, hint: str) -> LLMUnavailable:
    return LLMUnavailable(host=host, model=model, cause=cause, hint=hint)


@dataclass(frozen=True)
class GenerationOptions:
    """Decoding options; part of the response-cache key. The study decodes greedily (temperature 0).

    ``think``: whether a reasoning model may reason before answering (Ollama's ``think``; an
    OpenAI-compatible server's ``chat_template_kwargs.enable_thinking``). Off by default: the study
    scores answers, and a reasoning model can spend the whole ``max_tokens`` on reasoning.
    ``num_ctx``: the context window (Ollama); None keeps the server's default.
    """
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 256
    think: bool = False
    num_ctx: int | None = None
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
    """Which model produced an output. ``small`` marks models whose output is never a finding.

    ``endpoint`` (server host or base URL, "" for a local model) and ``digest`` (Ollama's model
    digest, the sha256 of a local model file; "" where the server reports none) identify the exact
    model: both are part of the response-cache key, so two servers, or a re-pulled tag, never share
    answers. ``resolved_from`` is the spec when it did not name the model (``auto``) and
    ``fallback`` why ``auto`` did not get its first choice; both are shown with every result.
    """
    backend: str  # "ollama" | "openai" | "embedded" | "imported" | "scripted"
    model: str
    small: bool = False
    note: str = ""  # e.g. "SmolLM2-135M-Instruct: a 135M model; its output exercises the pipeline, not a finding"
    endpoint: str = ""
    digest: str = ""
    resolved_from: str = ""
    fallback: str = ""
    # The model's size in billions of parameters and where that figure comes from ("ollama /api/show",
    # "GGUF metadata", "OpenAI-compatible /v1/models", "stated by the user"); None = unknown. An unknown
    # size is unknown, never large: :attr:`evidence_gate` then keeps the output from being a finding.
    # Stored only when known (records written before sizes existed read back unchanged).
    parameters_b: float | None = None
    size_source: str = ""

    def __post_init__(self):
        # ``small`` follows a known size (sub-1B), so no backend can report 0.49B and leave it False;
        # where the size is unknown a backend may still know the model is small (``small=True``)
        if self.parameters_b is not None:
            object.__setattr__(self, "small", self.parameters_b < 1.0)

    @property
    def size_text(self) -> str:
        """``0.49B (ollama /api/show)``, ``unknown size``: how every headline names the model's size."""
        if self.parameters_b is None:
            return "under 1B" if self.small else "unknown size"
        figure = f"{self.parameters_b:.2f}".rstrip("0").rstrip(".")
        return f"{figure}B ({self.size_source})" if self.size_source else f"{figure}B"

    @property
    def evidence_gate(self) -> str:
        """Why this model's output cannot carry a verdict, "" when it can: a sub-1B model, or a model
        whose size is unknown (the verdicts' rule: inconclusive unless the size is known and >= 1B)."""
        if self.small or (self.parameters_b is not None and self.parameters_b < 1.0):
            return f"a {SMALL_MODEL} ({self.size_text})"
        if self.parameters_b is None:
            return "a model of unknown size (state it to count its output)"
        return ""

    @property
    def label(self) -> str:
        """``backend:model [digest12]``, marked when the model is small or ``auto`` fell back: what every
        result is labelled with (never the spec string)."""
        text = f"{self.backend}:{self.model}" + (f" [{self.digest[:12]}]" if self.digest else "")
        if self.small:
            text += f" ({SMALL_MODEL}: not a finding)"
        if self.fallback:
            text += f" ({self.resolved_from or 'auto'} fell back)"
        return text

    @property
    def not_a_finding(self) -> str:
        """Why this model's output is no finding, "" when it may be one: the one wording of the small-model
        note that study notes and page warnings show (never a test on the model's name)."""
        return f"a {SMALL_MODEL}: its output exercises the pipeline, it is not a finding" if self.small else ""

    @classmethod
    def from_dict(cls, stored: Mapping) -> "Provenance":
        """The provenance of a stored :meth:`as_dict` record (a field an older record lacks takes its default;
        the derived ``label`` and ``resolution`` are recomputed)."""
        known = {f.name for f in fields(cls)}
        return cls(**{"backend": "", "model": "", **{k: v for k, v in stored.items() if k in known}})

    @property
    def resolution(self) -> str:
        """One line saying how a non-explicit spec was resolved ("" for an explicit one)."""
        if not self.resolved_from:
            return ""
        text = f"{self.resolved_from} resolved to {self.backend}:{self.model}"
        return text + (f": {self.fallback}" if self.fallback else "")

    def identity(self) -> dict:
        """What the response cache keys on: backend, model, endpoint and digest."""
        return {"backend": self.backend, "model": self.model, "endpoint": self.endpoint, "digest": self.digest}

    def as_dict(self) -> dict:
        out = asdict(self)
        for name in ("parameters_b", "size_source"):  # only when known: older records stay byte-identical
            if out[name] in (None, ""):
                del out[name]
        return {**out, "label": self.label, "resolution": self.resolution}


# the finish reason of an answer whose backend did not say why it stopped, or that was cached before
# finish reasons were stored: every answer the client returns has a finish reason, this one included
UNKNOWN_FINISH = "unknown"
# the finish reason of an answer cut at ``max_tokens`` (Ollama's ``done_reason``, OpenAI's ``finish_reason``)
LENGTH_FINISH = "length"


@dataclass(frozen=True)
class Completion:
    """A backend's reply with why it stopped. ``finish_reason``: ``stop`` (the model ended), ``length``
    (cut at ``max_tokens``) or what the server said; None when the backend cannot tell (the client
    answers :data:`UNKNOWN_FINISH` then). A backend's ``complete`` may return a plain ``str`` instead."""
    text: str
    finish_reason: str | None = None


@dataclass(frozen=True)
class LLMReply:
    text: str
    provenance: Provenance
    cached: bool = False
    seconds: float = 0.0  # wall time of the underlying call (0 for a cache hit)
    finish_reason: str | None = None  # see Completion (UNKNOWN_FINISH when not reported); stored in the cache


@dataclass(frozen=True)
class SpecOptions:
    """What :func:`pipeline.llm.specs.make_backend` hands a backend's :meth:`LLMBackend.from_spec` besides
    the spec's own text: the whole spec (for its error messages) and the client's settings."""
    spec: str
    timeout: float = 120.0
    api_key: str | None = None
    keep_alive: str | float | None = None


class LLMBackend:
    """Base of every backend: ``complete`` is its own; the optional hooks the client calls on every backend
    have their defaults here.

    A backend module in :mod:`pipeline.llm.backends` registers its class under the spec it answers to
    (``@register_backend("ollama", order=2, form="ollama[:MODEL[@HOST]]")``) and builds itself from the
    rest of the spec in :meth:`from_spec`: adding a backend is one new module there.
    """
    provenance: Provenance
    # an engine in this process (nothing to reach, nothing that can hang on a network) gets no timeout:
    # on a slow or shared CPU it is slow, not unavailable, and an abandoned call would keep it busy anyway
    in_process = False
    # True: ``complete_batch`` answers several requests in one call faster than one by one (the client
    # then sends its cache misses in batches)
    supports_batch = False
    # True: replies honour ``GenerationOptions.top_logprobs`` (see GenerationOptions)
    supports_logprobs = False
    # requests in flight by default (``make_client``): 1 for engines that use every core and for servers
    # that queue what exceeds their own parallelism
    default_concurrency = 1

    @classmethod
    def from_spec(cls, rest: str, options: SpecOptions) -> "LLMBackend":
        """The backend ``<name>:<rest>`` names (``rest`` is "" for the bare name); ValueError when malformed."""
        raise NotImplementedError(f"{cls.__name__} is registered for a spec but does not build from one")

    def rebuild_spec(self) -> str | None:
        """The spec that rebuilds this backend elsewhere (a Ray worker); None when there is none."""
        return None

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> "Completion | str":
        """The model's reply (text and finish reason, or the text alone); raises :class:`LLMError` on
        failure. Reasoning blocks and empty replies are dealt with by the client (``pipeline.llm.replies``)."""
        raise NotImplementedError

    def complete_batch(self, requests: Sequence[Sequence[Message]], options: GenerationOptions
                       ) -> "list[Completion | str]":
        """One reply per request, in order (here: one ``complete`` after another)."""
        return [self.complete(messages, options) for messages in requests]

    def resolve(self) -> None:
        """Called once, before the first cache key is computed: fill ``provenance.endpoint``/``digest``,
        check the model exists, raise :class:`LLMUnavailable` when it cannot be reached. Nothing here."""

    def prepare(self) -> None:
        """One-time setup (loading weights), called outside a call's timeout. Nothing here."""


class ChatClient:
    """Base of every client (:class:`pipeline.llm.client.CachedClient`, the Ray fan-out, test doubles): what a
    step may ask of any client is declared here, so no step probes one.

    - ``provenance``: which backend and model answer;
    - ``backend``: the :class:`LLMBackend` behind it, whose capabilities (``supports_logprobs``) say what a
      step can ask for;
    - ``effective_options(options)``: the options a request is sent with (the step's, with the client's
      overrides applied); no overrides here.
    """
    provenance: Provenance
    backend: LLMBackend

    def effective_options(self, options: GenerationOptions | None = None) -> GenerationOptions:
        return options or GenerationOptions()

    def chat(self, messages: Sequence[Message], options: GenerationOptions | None = None) -> LLMReply:
        raise NotImplementedError

    def chat_many(self, requests: Sequence[Sequence[Message]], options: GenerationOptions | None = None,
                  progress: str | None = None, on_progress: Callable[[int], None] | None = None
                  ) -> list[LLMReply | LLMError]:
        """Answer many requests (concurrently where the backend allows); a failed one comes back as
        its :class:`LLMError` in its slot, so one failure never loses the others. ``on_progress(n)``:
        ``n`` more requests answered."""
        raise NotImplementedError


@dataclass
class ScriptedBackend(LLMBackend):
    """A deterministic stand-in for tests: ``respond(messages) -> text`` (raise LLMError to fail)."""
    respond: Callable[[Sequence[Message]], str]
    provenance: Provenance = field(default_factory=lambda: Provenance("scripted", "scripted"))
    calls: list = field(default_factory=list)

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> str:
        self.calls.append(list(messages))
        return self.respond(messages)
