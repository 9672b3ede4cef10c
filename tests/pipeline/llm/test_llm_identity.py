"""Which model answered (issue 18, "Misleading labels and silent substitutions"): the response cache
keys on the endpoint and the model digest, results are labelled by the resolved model, and ``auto``
states its fallback and never picks a model that cannot chat. Against the loopback server."""
from __future__ import annotations

import socket

import pytest

from pipeline.llm import CachedClient, GenerationOptions, ResponseCache, make_client
from pipeline.llm.backends.ollama_backend import OllamaBackend
from pipeline.llm.backends.openai_backend import OpenAICompatibleBackend
from pipeline.llm.backends.llamacpp import LlamaCppBackend
from tests.support.loopback_llm import LoopbackLLMServer

MESSAGES = [{"role": "user", "content": "what is a lobster roll?"}]


def _chats(server) -> int:
    return sum(1 for path, _ in server.requests if path in ("/api/chat", "/v1/chat/completions"))


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_two_openai_servers_with_the_same_model_id_do_not_share_answers(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with LoopbackLLMServer() as a, LoopbackLLMServer() as b:
        at_a = CachedClient(OpenAICompatibleBackend("llama3.2:3b", a.url + "/v1"), cache, retries=0)
        at_b = CachedClient(OpenAICompatibleBackend("llama3.2:3b", b.url + "/v1"), cache, retries=0)
        assert not at_a.chat(MESSAGES).cached
        reply_b = at_b.chat(MESSAGES)
        assert not reply_b.cached and _chats(b) == 1  # B was asked, not served A's answer
        assert reply_b.provenance.endpoint == b.url + "/v1"
    assert cache.stats()["answers"] == 2


def test_a_re_pulled_tag_is_a_new_model(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with LoopbackLLMServer() as server:
        first = CachedClient(OllamaBackend("llama3.2:3b", host=server.url), cache, retries=0)
        assert first.provenance.digest == server.digests["llama3.2:3b"]
        first.chat(MESSAGES)
        assert CachedClient(OllamaBackend("llama3.2:3b", host=server.url), cache).chat(MESSAGES).cached
        server.digests["llama3.2:3b"] = "f" * 64  # `ollama pull` brought new weights under the same tag
        again = CachedClient(OllamaBackend("llama3.2:3b", host=server.url), cache, retries=0)
        reply = again.chat(MESSAGES)
        assert not reply.cached and _chats(server) == 2
        assert reply.provenance.digest == "f" * 64 and "[ffffffffffff]" in reply.provenance.label


def test_auto_names_the_model_it_resolved_to_and_says_why_it_fell_back(tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with LoopbackLLMServer() as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        prov = make_client("auto", cache=cache).provenance
        assert (prov.backend, prov.model, prov.resolved_from, prov.fallback) == ("ollama", "llama3.2:3b", "auto", "")
        assert prov.label.startswith("ollama:llama3.2:3b [") and "auto" not in prov.label
    with LoopbackLLMServer(models=["qwen3:8b"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        prov = make_client("auto", cache=cache).provenance
        assert prov.model == "qwen3:8b" and "has no llama3.2:3b" in prov.fallback
        assert "(auto fell back)" in prov.label and prov.as_dict()["resolution"].startswith("auto resolved to ollama:qwen3:8b: ")


def test_auto_skips_models_that_cannot_chat(tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with LoopbackLLMServer(models=["all-minilm-embed:latest", "nomic-embed-text:latest", "mistral:7b"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        prov = make_client("auto", cache=cache).provenance
        assert prov.model == "mistral:7b"
        # the listing is sorted: all-minilm-embed comes first and is skipped as an embedding model
        assert "none of the study models" in prov.fallback
        assert "skipped all-minilm-embed:latest: capabilities embedding" in prov.fallback
    with LoopbackLLMServer(models=["nomic-embed-text:latest"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        from pipeline.llm import make_backend

        backend = make_backend("auto")  # the embedded model, not the embedding model
        assert isinstance(backend, LlamaCppBackend)
        assert "no model that can chat" in backend.provenance.fallback
        assert "used the embedded model Qwen2.5-Coder-1.5B-Instruct-Q4_K_M" in backend.provenance.fallback


def test_auto_without_a_server_falls_back_to_the_embedded_model_and_says_so(monkeypatch):
    from pipeline.llm import make_backend

    monkeypatch.setenv("OLLAMA_HOST", _closed_port_url())
    backend = make_backend("auto")
    assert isinstance(backend, LlamaCppBackend)
    assert backend.provenance.fallback.startswith("no Ollama server answered at http://127.0.0.1:")
    assert "(auto fell back)" in backend.provenance.label and "Qwen2.5-Coder-1.5B" in backend.provenance.label


def test_bertscore_auto_fallback_is_stated(monkeypatch):
    from pipeline.generation import bertscore

    def unavailable():
        raise bertscore.EncoderError("cannot load roberta-large")

    bertscore.resolve_encoder.cache_clear()
    monkeypatch.setattr(bertscore, "_roberta_path", unavailable)
    try:
        enc = bertscore.resolve_encoder("auto")
        assert enc.key == "minilm" and enc.num_layers == 5
        assert "roberta-large is not cached" in enc.fallback and "auto fell back" in enc.as_dict()["label"]
        assert bertscore.resolve_encoder("minilm").fallback == ""  # asked for by name: no fallback
    finally:
        bertscore.resolve_encoder.cache_clear()
