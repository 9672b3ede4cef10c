"""Adding an LLM backend is one new module in ``pipeline.llm.backends``: the spec parser finds it, the
client uses it through the base class's hooks, and nothing else is edited."""
from __future__ import annotations

import sys

import pytest

import pipeline.llm.backends
from pipeline.llm import CachedClient, ResponseCache, ScriptedBackend, make_backend, make_client
from pipeline.llm.backends import BACKENDS

NEW_BACKEND = '''
"""An offline backend that answers with the last message, prefixed: one new module, nothing else edited."""
from pipeline.llm.backends import register_backend
from pipeline.llm.base import Completion, LLMBackend, Provenance


@register_backend("echo", order=9, form="echo[:PREFIX]")
class EchoBackend(LLMBackend):
    def __init__(self, prefix: str = "echo"):
        self.prefix = prefix
        self.provenance = Provenance("echo", prefix, small=True, note="repeats the question")
        self.calls = 0

    @classmethod
    def from_spec(cls, rest, options):
        return cls(rest or "echo")

    def rebuild_spec(self):
        return f"echo:{self.prefix}"

    def complete(self, messages, options):
        self.calls += 1
        return Completion(f"{self.prefix}: {messages[-1]['content']}", "stop")
'''


@pytest.fixture
def extra_backend_module(tmp_path, monkeypatch):
    """``pipeline.llm.backends`` with one more module, ``echo.py``, in a second folder of its ``__path__``
    (as a new file in ``pipeline/llm/backends/`` would be, without writing into the checkout)."""
    folder = tmp_path / "more_backends"
    folder.mkdir()
    (folder / "echo.py").write_text(NEW_BACKEND)
    monkeypatch.setattr(pipeline.llm.backends, "__path__", [*pipeline.llm.backends.__path__, str(folder)])
    BACKENDS.refresh()
    yield folder
    sys.modules.pop("pipeline.llm.backends.echo", None)
    BACKENDS.forget("echo")


def test_a_new_backend_module_is_a_spec_with_no_other_edit(extra_backend_module, tmp_path):
    assert "pipeline.llm.backends.echo" not in sys.modules  # listed from its source, imported on use
    with pytest.raises(ValueError, match=r"use auto, embedded\[:MODEL\], ollama\[:MODEL\[@HOST\]\], "
                                         r"openai:MODEL@BASE_URL or echo\[:PREFIX\]"):
        make_backend("parrot")
    backend = make_backend("echo:hi")
    assert type(backend).__name__ == "EchoBackend" and backend.rebuild_spec() == "echo:hi"
    client = make_client("echo:hi", cache=ResponseCache(tmp_path / "llm.sqlite"))
    assert client.concurrency == 1 and client.batch_size == 1  # the base class's defaults
    reply = client.chat([{"role": "user", "content": "what is BM25?"}])
    assert reply.text == "hi: what is BM25?" and reply.provenance.label.startswith("echo:hi")
    many = client.chat_many([[{"role": "user", "content": q}] for q in ("what is BM25?", "and TF-IDF?")])
    assert [r.text for r in many] == ["hi: what is BM25?", "hi: and TF-IDF?"] and many[0].cached
    assert client.backend.calls == 2


def test_the_base_class_batches_one_request_after_another():
    backend = ScriptedBackend(lambda m: "answer to " + m[-1]["content"])
    assert not backend.supports_batch and not backend.in_process and backend.rebuild_spec() is None
    assert backend.complete_batch([[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]],
                                  None) == ["answer to a", "answer to b"]


def test_a_backend_outside_the_base_class_is_refused():
    class Duck:
        provenance = None

        def complete(self, messages, options):
            return "quack"

    with pytest.raises(TypeError, match="Duck is no pipeline.llm.base.LLMBackend"):
        CachedClient(Duck())
