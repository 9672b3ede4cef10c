"""``make_client(spec)``: a :class:`~pipeline.llm.client.CachedClient` from one backend spec string
(the grammar, and the backend it names, in :mod:`pipeline.llm.specs`).

Keyword arguments: ``cache``, ``concurrency``, ``timeout``, ``retries``, ``backoff`` go to the
client; ``timeout`` also bounds each HTTP request; ``api_key`` goes to the OpenAI backend;
``keep_alive`` to the Ollama backend; ``overrides`` (decoding options the user set, e.g.
``{"temperature": 0.7, "think": True}``) replace the step's own in every request; ``step`` names
the study step in the cache's rows (``pipeline llm failures/purge --step``); ``stated_sizes``
(``{model: billions}``, the user's ``--model-size``) fills a size the backend does not report
(:mod:`pipeline.llm.sizes`). ``make_client`` resolves the model before returning (the
check that it exists): an unreachable model raises :class:`~pipeline.llm.base.LLMUnavailable` there.
"""
from __future__ import annotations

from typing import Mapping

from pipeline.llm.client import CachedClient
from pipeline.llm.sizes import with_stated_size
from pipeline.llm.specs import make_backend



def make_client(spec: str = "auto", *, cache=None, concurrency: int | None = None, timeout: float = 120.0,
                retries: int = 2, backoff: float = 1.0, api_key: str | None = None, executor: str = "local",
                address: str | None = None, keep_alive: str | float | None = None, overrides: dict | None = None,
                step: str | None = None, stated_sizes: Mapping[str, float] | None = None):
    """A cached chat client for ``spec``, its model checked (:class:`LLMUnavailable` when unreachable).

    ``concurrency`` (requests in flight) defaults to the backend's ``default_concurrency``: 1 for the embedded
    model (it uses every core already) and for Ollama (which answers ``OLLAMA_NUM_PARALLEL`` requests
    at once and queues the rest, so more in flight only queue on the server, where the wait would
    count against the timeout), 4 for OpenAI-compatible servers. ``executor="ray"`` fans
    ``chat_many`` out over Ray (:class:`pipeline.llm.ray_fanout.RayChatClient`; ``address`` of the
    cluster, default ``[ray]``), every call still through this client's cache."""
    if executor not in ("local", "ray"):
        raise ValueError(f"LLM executor {executor!r}: use local or ray")
    backend = make_backend(spec, timeout=timeout, api_key=api_key, keep_alive=keep_alive)
    if concurrency is None:
        concurrency = backend.default_concurrency
    client = CachedClient(backend, cache, concurrency=concurrency, timeout=timeout, retries=retries, backoff=backoff,
                          overrides=overrides, step=step)
    # resolve now: a missing model or dead server fails before any work; then the user's statement of
    # the model's size (recorded as stated; never in the cache key, Provenance.identity)
    backend.provenance = with_stated_size(client.provenance, stated_sizes)
    if executor == "local":
        return client
    from core.ray_cluster import ray_settings
    from pipeline.llm.ray_fanout import RayChatClient

    return RayChatClient(client, settings=ray_settings().with_overrides(address=address))
