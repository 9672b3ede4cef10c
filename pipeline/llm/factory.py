"""``make_client(spec)``: a :class:`~pipeline.llm.client.CachedClient` from one backend spec string.

Spec grammar (the same strings the CLI's ``--llm`` and the pages accept)::

    auto                      Ollama when a server answers at OLLAMA_HOST (its first study model that
                              it has, llama3.2:3b then qwen3:8b, else the first model it lists),
                              otherwise the embedded model
    embedded                  the default offline model, Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF from
                              PyPI packages) on llama.cpp (``pipeline.llm.backends.llamacpp``)
    embedded:MODEL            another offline model on llama.cpp: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b,
                              smollm2 (SmolLM2-135M-Instruct, the fast test model); see
                              ``pipeline.llm.gguf_models``
    embedded:smollm2-transformers  SmolLM2-135M through transformers (de-quantised; for comparison)
    ollama                    Ollama, llama3.2:3b (the study's first generator)
    ollama:MODEL              e.g. ollama:qwen3:8b (the model name may itself contain ':')
    ollama:MODEL@HOST         e.g. ollama:llama3.2:3b@http://gpu-box:11434
    openai:MODEL@BASE_URL     an OpenAI-compatible server, e.g. openai:Qwen/Qwen3-8B@http://localhost:8000/v1
                              (API key from OPENAI_API_KEY; local servers accept any)

Keyword arguments: ``cache``, ``concurrency``, ``timeout``, ``retries``, ``backoff`` go to the
client; ``timeout`` also bounds each HTTP request; ``api_key`` goes to the OpenAI backend.
"""
from __future__ import annotations

from pipeline.llm.base import LLMBackend, LLMError
from pipeline.llm.client import CachedClient


def _default_ollama_model(host: str | None) -> str | None:
    """The model ``auto`` uses on a live server, or None when no server answers or it has no model."""
    from pipeline.llm.backends import STUDY_MODELS, list_ollama_models

    try:
        available = list_ollama_models(host, timeout=2.0)
    except LLMError:
        return None
    for model in STUDY_MODELS:
        if model in available:
            return model
    return available[0] if available else None


def make_backend(spec: str = "auto", *, timeout: float = 120.0, api_key: str | None = None) -> LLMBackend:
    """The backend a spec names (see the module docstring); ValueError for a malformed spec."""
    from pipeline.llm.backends import STUDY_MODELS, EmbeddedBackend, OllamaBackend, OpenAICompatibleBackend

    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    kind = kind.lower()
    if kind == "auto" and not rest:
        model = _default_ollama_model(None)
        return OllamaBackend(model, timeout=timeout) if model else make_backend("embedded")
    if kind == "embedded" and rest == "smollm2-transformers":
        return EmbeddedBackend()
    if kind == "embedded":
        from pipeline.llm.backends.llamacpp import LlamaCppBackend

        return LlamaCppBackend(rest or None)
    if kind == "ollama":
        model, _, host = rest.partition("@")
        return OllamaBackend(model or STUDY_MODELS[0], host=host or None, timeout=timeout)
    if kind == "openai":
        model, _, base_url = rest.partition("@")
        if not model or not base_url:
            raise ValueError(f"LLM spec {spec!r}: write openai:MODEL@BASE_URL "
                             f"(e.g. openai:Qwen/Qwen3-8B@http://localhost:8000/v1)")
        return OpenAICompatibleBackend(model, base_url, api_key=api_key, timeout=timeout)
    raise ValueError(f"unknown LLM spec {spec!r}; use auto, embedded[:MODEL], ollama[:MODEL[@HOST]] or "
                     f"openai:MODEL@BASE_URL")


def make_client(spec: str = "auto", *, cache=None, concurrency: int | None = None, timeout: float = 120.0,
                retries: int = 2, backoff: float = 1.0, api_key: str | None = None, executor: str = "local",
                address: str | None = None):
    """A cached chat client for ``spec``. ``concurrency`` defaults to 1 for the embedded model (it
    uses every core already) and 4 for servers. ``executor="ray"`` fans ``chat_many`` out over Ray
    (:class:`pipeline.llm.ray_fanout.RayChatClient`; ``address`` of the cluster, default ``[ray]``),
    every call still through this client's cache."""
    backend = make_backend(spec, timeout=timeout, api_key=api_key)
    if concurrency is None:
        concurrency = 1 if backend.provenance.backend == "embedded" else 4
    client = CachedClient(backend, cache, concurrency=concurrency, timeout=timeout, retries=retries, backoff=backoff)
    if executor == "local":
        return client
    if executor != "ray":
        raise ValueError(f"LLM executor {executor!r}: use local or ray")
    from core.ray_cluster import ray_settings
    from pipeline.llm.ray_fanout import RayChatClient

    return RayChatClient(client, settings=ray_settings().with_overrides(address=address))
