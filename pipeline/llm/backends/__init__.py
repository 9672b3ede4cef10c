"""The LLM backends, each registered under the spec it answers to where it is defined (:data:`BACKENDS`, a
:class:`core.registry.Registry`)::

    @register_backend("ollama", order=2, form="ollama[:MODEL[@HOST]]")
    class OllamaBackend(LLMBackend):
        @classmethod
        def from_spec(cls, rest, options): ...

A registered name is either a spec's kind (``ollama``: the spec ``ollama:REST`` hands ``REST`` to
``from_spec``) or a whole spec (``embedded:smollm2-transformers``, which wins over its kind); ``form``
is how the spec error lists it. Adding a backend is one new module here: :func:`pipeline.llm.specs.make_backend`
reads the declarations from the modules' source and imports only the module of the backend a spec
names (so ``ollama`` never imports the ``openai`` client, nor ``embedded`` transformers).

Modules: ``llamacpp`` (spec ``embedded[:MODEL]``, the offline default on llama.cpp), ``ollama_backend``,
``openai_backend``, ``transformers_engine`` (spec ``embedded:smollm2-transformers``, SmolLM2 through
transformers).
"""
from core.registry import Registry

BACKENDS = Registry("pipeline.llm.backends", "register_backend", "LLM backend")
register_backend = BACKENDS.register

__all__ = ["BACKENDS", "register_backend"]
