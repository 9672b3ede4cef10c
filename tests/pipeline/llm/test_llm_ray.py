"""LLM fan-out over Ray (local instance, 2 CPUs): calls spread over Ray tasks, every one through the
driver's response cache. A loopback server speaking Ollama's HTTP API counts the calls really paid."""
from __future__ import annotations

import threading

import pytest

ray = pytest.importorskip("ray")

from core.ray_cluster import RaySettings  # noqa: E402
from pipeline.llm.backends.ollama_backend import OllamaBackend  # noqa: E402
from pipeline.llm.base import GenerationOptions, LLMError, LLMReply  # noqa: E402
from pipeline.llm.cache import ResponseCache  # noqa: E402
from pipeline.llm.client import CachedClient  # noqa: E402
from pipeline.llm.ray_fanout import RayChatClient, backend_spec  # noqa: E402
from tests.support.loopback_llm import LoopbackLLMServer  # noqa: E402

pytestmark = pytest.mark.slow
SETTINGS = RaySettings(executor="ray", cpus_per_run=1)


def _chat_calls(server) -> int:
    return sum(1 for path, _ in server.requests if path == "/api/chat")


def _client(server, tmp_path, model="llama3.2:3b") -> CachedClient:
    return CachedClient(OllamaBackend(model, host=server.url, timeout=30), ResponseCache(tmp_path / "llm.sqlite"),
                        concurrency=2, retries=0)


def _prompts(n: int, tag: str) -> list:
    return [[{"role": "user", "content": f"{tag} question {i}"}] for i in range(n)]


def test_fan_out_answers_like_the_local_client_and_a_rerun_makes_no_call(ray_cluster, server, tmp_path):
    client = _client(server, tmp_path)
    fan = RayChatClient(client, settings=SETTINGS, chunk_size=3)
    assert backend_spec(client.backend) == f"ollama:llama3.2:3b@{server.url}"
    requests = _prompts(9, "fan") + _prompts(3, "fan")  # three requests twice: asked once
    options = GenerationOptions(max_tokens=32)
    before = _chat_calls(server)
    replies = fan.chat_many(requests, options)
    assert _chat_calls(server) - before == 9 and fan.calls_made == 9
    assert all(isinstance(r, LLMReply) and not r.cached for r in replies)
    # The same answers, in order, as the client gives them locally (now from the cache: no call).
    local = client.chat_many(requests, options)
    assert [r.text for r in replies] == [r.text for r in local] and all(r.cached for r in local)
    assert "fan question 4" in replies[4].text and replies[10].text == replies[1].text
    rerun = fan.chat_many(requests, options)
    assert _chat_calls(server) - before == 9 and all(r.cached for r in rerun)
    assert client.cache.stats() == {"answers": 9, "pending": 0, "failures": 0}


def test_two_concurrent_fan_outs_never_pay_for_the_same_call_twice(ray_cluster, server, tmp_path):
    """Two drivers' worth of workers over one cache, slow calls in flight at once: one payment each."""
    requests = _prompts(4, "shared")
    fans = [RayChatClient(_client(server, tmp_path, model="slow"), settings=SETTINGS, chunk_size=1) for _ in range(2)]
    before = _chat_calls(server)
    out: list = [None, None]
    threads = [threading.Thread(target=lambda i=i: out.__setitem__(i, fans[i].chat_many(requests))) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert all(o is not None for o in out)
    assert _chat_calls(server) - before == 4  # not 8
    assert [r.text for r in out[0]] == [r.text for r in out[1]]
    assert fans[0].calls_made + fans[1].calls_made == 4


def test_a_failing_call_comes_back_in_its_slot_and_is_not_cached(ray_cluster, server, tmp_path):
    good = _client(server, tmp_path)
    bad = CachedClient(OllamaBackend("err", host=server.url, timeout=30), good.cache, retries=0)
    replies = RayChatClient(bad, settings=SETTINGS).chat_many(_prompts(2, "broken"))
    assert all(isinstance(r, LLMError) for r in replies)
    assert good.cache.stats()["answers"] == 0 and good.cache.stats()["failures"] == 2


def test_an_unavailable_model_on_the_workers_stops_the_fan_out(ray_cluster, server, tmp_path):
    """The server lists the model but answers 404 for it: the workers' LLMUnavailable (host, model,
    cause intact across processes) stops the driver's chat_many instead of filling every slot."""
    from pipeline.llm import LLMUnavailable

    client = CachedClient(OllamaBackend("missing", host=server.url, timeout=30), ResponseCache(tmp_path / "llm.sqlite"),
                          retries=2)
    with pytest.raises(LLMUnavailable) as info:
        RayChatClient(client, settings=SETTINGS, chunk_size=2).chat_many(_prompts(6, "gone"))
    assert (info.value.host, info.value.model, info.value.hint) == (server.url, "missing", "ollama pull missing")
    assert client.cache.stats()["answers"] == 0
