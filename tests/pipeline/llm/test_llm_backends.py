"""Ollama and OpenAI-compatible backends against a loopback server speaking their HTTP APIs
(the official ``ollama`` and ``openai`` clients are exercised for real; only the server is ours)."""
from __future__ import annotations

import socket
import time

import pytest

from pipeline.llm import CachedClient, GenerationOptions, LLMError, ResponseCache, make_backend, make_client
from pipeline.llm.backends.transformers_engine import TransformersBackend
from pipeline.llm.backends.ollama_backend import OllamaBackend, list_ollama_models
from pipeline.llm.backends.openai_backend import OpenAICompatibleBackend
from pipeline.llm.backends.llamacpp import LlamaCppBackend
from tests.support.loopback_llm import SLOW_S

MESSAGES = [{"role": "user", "content": "what is a lobster roll?"}]
OPTIONS = GenerationOptions(temperature=0.0, seed=7, max_tokens=33)


def _chats(server) -> int:
    """Chat requests the server received (model checks, /api/tags and /v1/models, not counted)."""
    return sum(1 for path, _ in server.requests if path in ("/api/chat", "/v1/chat/completions"))


def _backends(server, model, timeout=10.0):
    return {"ollama": OllamaBackend(model, host=server.url, timeout=timeout),
            "openai": OpenAICompatibleBackend(model, base_url=server.url + "/v1", timeout=timeout)}


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_reply_carries_prompt_and_options_and_is_cached(server, cache, kind):
    client = CachedClient(_backends(server, "llama3.2:3b")[kind], cache, retries=0)
    n_before = _chats(server)
    reply = client.chat(MESSAGES, OPTIONS)
    assert reply.text.startswith("echo[llama3.2:3b] what is a lobster roll?")
    assert "<think>" not in reply.text  # reasoning blocks are stripped
    if kind == "ollama":  # Ollama's option names
        assert '"num_predict": 33' in reply.text and '"seed": 7' in reply.text and '"temperature": 0.0' in reply.text
    else:
        assert '"max_tokens": 33' in reply.text and '"seed": 7' in reply.text
    assert not reply.cached and reply.provenance.backend == kind and not reply.provenance.small
    again = client.chat(MESSAGES, OPTIONS)
    assert again.cached and again.text == reply.text
    assert _chats(server) == n_before + 1  # the second answer came from the cache
    assert cache.stats() == {"answers": 1, "pending": 0, "failures": 0}


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_server_error_is_retried_recorded_and_never_cached(server, cache, kind):
    client = CachedClient(_backends(server, "err")[kind], cache, retries=2, backoff=0.01)
    with pytest.raises(LLMError, match="server error.*internal failure"):
        client.chat(MESSAGES, OPTIONS)
    assert client.calls_made == 3  # first attempt + 2 retries
    failures = cache.failures()
    assert [f["attempt"] for f in failures] == [0, 1, 2]
    assert cache.stats()["answers"] == 0 and cache.stats()["pending"] == 0


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_unknown_model_is_not_retried(server, cache, kind):
    client = CachedClient(_backends(server, "missing")[kind], cache, retries=3, backoff=0.01)
    with pytest.raises(LLMError, match="not found") as info:
        client.chat(MESSAGES, OPTIONS)
    assert info.value.retryable is False and client.calls_made == 1


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_slow_reply_past_the_timeout_fails(server, cache, kind):
    client = CachedClient(_backends(server, "slow", timeout=0.5)[kind], cache, timeout=0.5, retries=0)
    start = time.perf_counter()
    with pytest.raises(LLMError, match="no reply within 0.5 s"):
        client.chat(MESSAGES, OPTIONS)
    assert time.perf_counter() - start < SLOW_S  # gave up at the timeout, did not wait for the reply
    assert cache.stats()["answers"] == 0 and len(cache.failures()) == 1


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_malformed_body_is_an_error(server, cache, kind):
    client = CachedClient(_backends(server, "malformed")[kind], cache, retries=0)
    with pytest.raises(LLMError, match="malformed"):
        client.chat(MESSAGES, OPTIONS)
    assert cache.stats()["answers"] == 0


def test_chat_many_keeps_failures_in_their_slots(server, cache):
    ok = CachedClient(OllamaBackend("qwen3:8b", host=server.url), cache, concurrency=3, retries=0)
    requests = [[{"role": "user", "content": f"q{i}"}] for i in range(4)] + [[{"role": "user", "content": "q0"}]]
    replies = ok.chat_many(requests, OPTIONS, progress=None)
    assert [r.text.split(" | ")[0] for r in replies] == ["echo[qwen3:8b] q0", "echo[qwen3:8b] q1",
                                                         "echo[qwen3:8b] q2", "echo[qwen3:8b] q3",
                                                         "echo[qwen3:8b] q0"]
    assert ok.calls_made == 4  # the repeated request was asked once
    bad = CachedClient(OllamaBackend("err", host=server.url), cache, retries=0)
    out = bad.chat_many(requests[:2], OPTIONS)
    assert all(isinstance(r, LLMError) for r in out)


def test_ollama_models_are_listed_from_the_server(server):
    assert "llama3.2:3b" in list_ollama_models(server.url) and "qwen3:8b" in list_ollama_models(server.url)


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_make_client_specs(server, monkeypatch, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    auto = make_backend("auto")
    assert isinstance(auto, OllamaBackend) and auto.model == "llama3.2:3b"  # the study's first model
    assert make_backend("ollama:qwen3:8b").model == "qwen3:8b"
    other = make_backend(f"ollama:qwen3:8b@{server.url}")
    assert other.model == "qwen3:8b" and other.host == server.url
    oa = make_backend(f"openai:Qwen/Qwen3-8B@{server.url}/v1")
    assert isinstance(oa, OpenAICompatibleBackend) and oa.model == "Qwen/Qwen3-8B"
    monkeypatch.setenv("OLLAMA_HOST", _closed_port_url())
    with pytest.raises(LLMError, match="connection refused"):
        list_ollama_models()
    fallback = make_backend("auto")  # no server answers: the embedded model (not loaded until used)
    assert isinstance(fallback, LlamaCppBackend) and fallback.provenance.model == make_backend("embedded").provenance.model
    client = make_client("embedded:smollm2", cache=ResponseCache(tmp_path / "c.sqlite"))
    assert client.concurrency == 1 and "not a finding" in client.provenance.note
    assert isinstance(make_backend("embedded:smollm2-transformers"), TransformersBackend)
    for bad in ("openai:model-without-url", "gpt", "embedded:llama"):
        with pytest.raises(ValueError):
            make_backend(bad)
