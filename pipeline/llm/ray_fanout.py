"""LLM fan-out over Ray: a :class:`~pipeline.llm.base.ChatClient` whose ``chat_many`` spreads the calls
over Ray workers, every call still going through the response cache.

:class:`RayChatClient` wraps the :class:`~pipeline.llm.client.CachedClient` a step already uses
(generation, judgments, typology assignment, pairwise preference all call ``chat_many``):

1. On the driver, identical requests are asked once and cached answers are returned at once: a
   rerun of a finished step sends nothing to Ray and makes no call.
2. The misses go to Ray tasks in chunks. Each task runs a ``CachedClient`` of its own over the
   same backend (rebuilt on the worker from its ``make_backend`` spec: an Ollama or
   OpenAI-compatible server, or the embedded model, loaded once per worker process) and over the
   *driver's* cache, reached through a :class:`CacheService` actor on the driver's node (the SQLite
   file lives there). So the cache's in-flight claims arbitrate between all workers of all
   drivers and any local process using that cache: two workers never pay for the same call; the
   second waits for the first one's answer, or takes the claim over when its owner died or its
   lease ran out.
3. A failed call comes back as its :class:`~pipeline.llm.base.LLMError` in its slot (nothing cached,
   the next run tries again), as with ``CachedClient.chat_many``. A chunk whose worker was lost is
   resubmitted by Ray (``max_retries``); its claims are taken over when the lost worker's pid is gone
   (same host) or its lease expires (another host).

Where the server runs matters: an Ollama ``host`` of ``127.0.0.1`` means each worker's own machine
(one server per GPU node is the way to scale); a named host is shared by all workers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from core.ray_cluster import FileService, RaySettings, connect, node_service, ray_settings
from pipeline.llm.base import (ChatClient, GenerationOptions, LLMBackend, LLMError, LLMReply, LLMUnavailable, Message,
                               Provenance)
from pipeline.llm.cache import ResponseCache, request_key
from pipeline.llm.client import CachedClient

DEFAULT_CHUNK = 8
TASK_RETRIES = 2


class CacheService(FileService):
    """The response cache of one SQLite file, for workers on any node (body of a Ray actor)."""

    def __init__(self, path: str):
        self._cache = ResponseCache(path)
        self._bind_file(path)

    def get(self, key):
        return self._cache.get(key)

    def lookup(self, key):
        return self._cache.lookup(key)

    def claim(self, key, **kwargs):
        return self._cache.claim(key, **kwargs)

    def put(self, key, text, **kwargs):
        return self._cache.put(key, text, **kwargs)

    def release(self, key, owner):
        return self._cache.release(key, owner)

    def record_failure(self, key, **kwargs):
        return self._cache.record_failure(key, **kwargs)


class RemoteResponseCache:
    """:class:`~pipeline.llm.cache.ResponseCache`'s methods that ``CachedClient`` uses, through the actor."""

    def __init__(self, actor):
        self._actor = actor

    def _call(self, method: str, *args, **kwargs):
        import ray

        return ray.get(getattr(self._actor, method).remote(*args, **kwargs))

    def get(self, key):
        return self._call("get", key)

    def lookup(self, key):
        return self._call("lookup", key)

    def claim(self, key, **kwargs):
        return self._call("claim", key, **kwargs)

    def put(self, key, text, **kwargs):
        self._call("put", key, text, **kwargs)

    def release(self, key, owner):
        self._call("release", key, owner)

    def record_failure(self, key, **kwargs):
        self._call("record_failure", key, **kwargs)


def backend_spec(backend) -> str:
    """The ``make_backend`` spec that rebuilds ``backend`` on a worker (its clients do not pickle)."""
    spec = backend.rebuild_spec()
    if spec is not None:
        return spec
    raise ValueError(f"backend {backend.provenance.backend}:{backend.provenance.model} has no spec to rebuild it on a Ray worker; "
                     f"pass a picklable backend as RayChatClient(..., backend=...)")


_WORKER_BACKENDS: dict = {}  # spec -> backend, per worker process (the embedded model loads once)


def answer_chunk(backend, cache_actor, requests: Sequence[Sequence[Message]], options: GenerationOptions,
                 client_options: dict) -> tuple[list, int]:
    """Body of one Ray task: ``CachedClient(backend, driver's cache).chat_many(requests)``.

    ``backend`` is a spec (rebuilt here, once per worker) or a picklable backend. Returns the
    replies (``LLMReply`` or ``LLMError`` per request) and the calls this task paid for.
    """
    if isinstance(backend, str):
        from pipeline.llm.specs import make_backend

        if backend not in _WORKER_BACKENDS:
            _WORKER_BACKENDS[backend] = make_backend(backend, timeout=client_options.get("timeout", 120.0))
        backend = _WORKER_BACKENDS[backend]
    client = CachedClient(backend, RemoteResponseCache(cache_actor), **client_options)
    try:
        return client.chat_many(requests, options), client.calls_made
    except LLMUnavailable as exc:  # handed back in every slot: the driver stops the step
        return [exc] * len(requests), client.calls_made


class RayChatClient(ChatClient):
    """``client``'s chat, with ``chat_many`` fanned out over Ray (see the module docstring).

    ``chunk_size`` requests per task (a task answers its chunk with ``client.concurrency`` calls in
    flight); ``num_cpus`` per task (default: ``[ray] cpus_per_run``; a server-backed client needs
    little CPU, the embedded model wants its threads).
    """

    def __init__(self, client: CachedClient, *, settings: RaySettings | None = None, chunk_size: int = DEFAULT_CHUNK,
                 num_cpus: float | None = None, backend=None):
        self.client = client
        self.settings = settings or ray_settings()
        self.chunk_size = max(1, int(chunk_size))
        self.num_cpus = self.settings.cpus_per_run if num_cpus is None else float(num_cpus)
        self._backend = backend if backend is not None else backend_spec(client.backend)
        self.calls_made = 0  # calls the workers paid for in this client's fan-outs

    @property
    def provenance(self) -> Provenance:
        return self.client.provenance

    @property
    def backend(self) -> LLMBackend:
        return self.client.backend

    def effective_options(self, options: GenerationOptions | None = None) -> GenerationOptions:
        return self.client.effective_options(options)

    def chat(self, messages: Sequence[Message], options: GenerationOptions | None = None) -> LLMReply:
        return self.client.chat(messages, options)

    def chat_many(self, requests: Sequence[Sequence[Message]], options: GenerationOptions | None = None,
                  progress: str | None = None, on_progress: Callable[[int], None] | None = None
                  ) -> list[LLMReply | LLMError]:
        import ray

        options = self.effective_options(options)
        prov = self.provenance
        keys = [request_key(prov, m, options) for m in requests]
        results: dict[str, LLMReply | LLMError] = {}
        misses: dict[str, Sequence[Message]] = {}
        for key, messages in zip(keys, requests):
            if key in results or key in misses:
                continue
            hit = self.client.cache.lookup(key)
            if hit is None:
                misses[key] = messages
            else:
                results[key] = LLMReply(hit.text, prov, cached=True, seconds=0.0, finish_reason=hit.finish_reason)
        if on_progress is not None and results:
            on_progress(len(results))
        if misses:
            self._fan_out(misses, options, results, progress, ray, on_progress)
        return [results[key] for key in keys]

    def _fan_out(self, misses: dict, options: GenerationOptions, results: dict, progress: str | None, ray,
                 on_progress: Callable[[int], None] | None = None) -> None:
        connect(self.settings, log_to_driver=False)
        actor = node_service(CacheService, Path(self.client.cache.path), prefix="irdash-llm-cache")
        task = ray.remote(max_retries=TASK_RETRIES, retry_exceptions=False)(answer_chunk)
        client_options = {"concurrency": self.client.concurrency, "timeout": self.client.timeout,
                          "retries": self.client.retries, "backoff": self.client.backoff, "step": self.client.step}
        items = list(misses.items())
        pending = {}
        for start in range(0, len(items), self.chunk_size):
            chunk = items[start:start + self.chunk_size]
            ref = task.options(num_cpus=self.num_cpus).remote(self._backend, actor, [m for _, m in chunk], options,
                                                              client_options)
            pending[ref] = [k for k, _ in chunk]
        bar = None
        if progress is not None:
            from tqdm import tqdm

            bar = tqdm(total=len(items), desc=progress, unit="call")
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                chunk_keys = pending.pop(ready[0])
                try:
                    replies, calls = ray.get(ready[0])
                except Exception as exc:  # noqa: BLE001 - the chunk's worker was lost for good
                    replies, calls = [LLMError(f"Ray task lost: {type(exc).__name__}: {exc}")] * len(chunk_keys), 0
                self.calls_made += calls
                results.update(zip(chunk_keys, replies))
                unavailable = next((r for r in replies if isinstance(r, LLMUnavailable)), None)
                if unavailable is not None:
                    raise unavailable  # the model cannot be reached: stop the step (pending chunks cancelled)
                if bar is not None:
                    bar.update(len(chunk_keys))
                if on_progress is not None:
                    on_progress(len(chunk_keys))
        except BaseException:
            for ref in pending:
                ray.cancel(ref)
            raise
        finally:
            if bar is not None:
                bar.close()
