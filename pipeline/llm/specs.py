"""``make_backend(spec)``: the :class:`~pipeline.llm.base.LLMBackend` one backend spec string names.

Spec grammar (the same strings the CLI's model options and the pages accept)::

    auto                      Ollama when a server answers at OLLAMA_HOST (its first study model that
                              it has, llama3.2:3b then qwen3:8b, else the first model it lists that can
                              chat: embedding models are skipped), otherwise the embedded model. What
                              was tried and why it fell back is kept in the provenance
                              (``resolved_from``, ``fallback``) and shown with every result
    embedded                  the default offline model, Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF from
                              PyPI packages) on llama.cpp (``pipeline.llm.backends.llamacpp``)
    embedded:MODEL            another offline model on llama.cpp: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b,
                              smollm2 (SmolLM2-135M-Instruct, the fast test model); see
                              ``pipeline.llm.gguf_models``
    embedded:smollm2-transformers  SmolLM2-135M through transformers (de-quantised; for comparison;
                              ``pipeline.llm.backends.transformers_engine``)
    ollama                    Ollama, llama3.2:3b (the study's first generator)
    ollama:MODEL              e.g. ollama:qwen3:8b (the model name may itself contain ':')
    ollama:MODEL@HOST         e.g. ollama:llama3.2:3b@http://gpu-box:11434
    openai:MODEL@BASE_URL     an OpenAI-compatible server, e.g. openai:Qwen/Qwen3-8B@http://localhost:8000/v1
                              (API key from OPENAI_API_KEY; local servers accept any)

A new backend is one new module in ``pipeline.llm.backends``: a :class:`~pipeline.llm.base.LLMBackend`
registered under its spec's kind, that builds itself from the rest of the spec (``from_spec``); see
that package's docstring. ``auto`` is no backend: it chooses one of the others (:func:`resolve_auto`).
The client factory (``make_client``, in ``factory.py``) and the Ray fan-out (a worker rebuilds its
backend from the spec: ``ray_fanout.py``) both import this module, which imports neither.
"""
from __future__ import annotations

from dataclasses import replace

from pipeline.llm.backends import BACKENDS
from pipeline.llm.base import LLMBackend, LLMError, LLMUnavailable, SpecOptions


def resolve_auto(host: str | None = None) -> tuple[str | None, str]:
    """``(Ollama model, fallback)`` for ``auto``: the first study model the server has, else the first
    listed model that can chat; ``fallback`` says why it is not the first study model ("" when it is).
    ``(None, why)`` when no server answers or none of its models can chat."""
    from pipeline.llm.backends.ollama_backend import STUDY_MODELS, list_ollama_models, model_capabilities, ollama_host

    try:
        available = list_ollama_models(host, timeout=2.0)
    except LLMError as exc:
        cause = exc.cause if isinstance(exc, LLMUnavailable) else exc
        return None, f"no Ollama server answered at {ollama_host(host)} ({cause})"
    missing = [m for m in STUDY_MODELS if m not in available]
    for model in STUDY_MODELS:
        if model in available:
            return model, ("" if model == STUDY_MODELS[0] else
                           f"the server at {ollama_host(host)} has no {', '.join(missing)}")
    skipped = []
    for model in available:
        capability = model_capabilities(model, host)
        if capability["chat"]:
            return model, (f"the server at {ollama_host(host)} has none of the study models "
                           f"({', '.join(STUDY_MODELS)}); took the first model that can chat"
                           + (f" (skipped {'; '.join(skipped)})" if skipped else ""))
        skipped.append(f"{model}: {capability['why']}")
    return None, (f"the Ollama server at {ollama_host(host)} has no model that can chat"
                  + (f" (skipped {'; '.join(skipped)})" if skipped else ""))


def make_backend(spec: str = "auto", *, timeout: float = 120.0, api_key: str | None = None,
                 keep_alive: str | float | None = None) -> LLMBackend:
    """The backend a spec names (see the module docstring); ValueError for a malformed spec."""
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    kind = kind.lower()
    if kind == "auto" and not rest:
        model, fallback = resolve_auto(None)
        backend = make_backend(f"ollama:{model}", timeout=timeout, keep_alive=keep_alive) if model else \
            make_backend("embedded")
        if model is None:
            fallback += f"; used the embedded model {backend.provenance.model}"
        backend.provenance = replace(backend.provenance, resolved_from="auto", fallback=fallback)
        return backend
    options = SpecOptions(spec, timeout=timeout, api_key=api_key, keep_alive=keep_alive)
    names = BACKENDS.names()
    if f"{kind}:{rest}" in names:  # a whole spec registered on its own (embedded:smollm2-transformers)
        return BACKENDS.load(f"{kind}:{rest}").from_spec("", options)
    if kind in names:
        return BACKENDS.load(kind).from_spec(rest, options)
    forms = ["auto"] + [BACKENDS.info(name)["form"] for name in names if "form" in BACKENDS.info(name)]
    raise ValueError(f"unknown LLM spec {spec!r}; use {', '.join(forms[:-1])} or {forms[-1]}")


def check_spec(spec: str) -> None:
    """ValueError (the one message :func:`make_backend` gives) when ``spec`` is no LLM spec: the check the
    command line and the forms make before anything starts. It builds the backend the spec names and
    nothing more: no server is asked (``auto``, whose choice needs one, is accepted as it is) and no
    model is loaded."""
    text = (spec or "").strip()
    if not text:
        raise ValueError("empty LLM spec; use auto, embedded[:MODEL], ollama[:MODEL[@HOST]] or openai:MODEL@BASE_URL")
    if text.lower() != "auto":
        make_backend(text)
