"""Response cache and CachedClient: hits make no call, failures are never answers, concurrent workers
pay for one call, a dead worker's claim is taken over."""
from __future__ import annotations

import json
import multiprocessing
import threading
import time

import pytest

from pipeline.llm import CachedClient, GenerationOptions, LLMError, Provenance, ResponseCache, ScriptedBackend
from pipeline.llm.cache import request_key

MSG = [{"role": "user", "content": "hello"}]


def _slow_echo(delay):
    def respond(messages):
        time.sleep(delay)
        return "answer to " + messages[-1]["content"]
    return respond


def test_key_depends_on_backend_model_messages_and_options():
    base = request_key("ollama", "m", MSG, GenerationOptions())
    assert base == request_key("ollama", "m", [dict(MSG[0])], GenerationOptions())
    assert len({base, request_key("openai", "m", MSG, GenerationOptions()),
                request_key("ollama", "m2", MSG, GenerationOptions()),
                request_key("ollama", "m", [{"role": "user", "content": "hello!"}], GenerationOptions()),
                request_key("ollama", "m", MSG, GenerationOptions(seed=1)),
                request_key("ollama", "m", MSG, GenerationOptions(max_tokens=10))}) == 6


def test_two_workers_pay_for_one_call(tmp_path):
    """Two clients (own owners, own connections) ask the same thing at once: one backend call."""
    path = tmp_path / "c.sqlite"
    backend = ScriptedBackend(_slow_echo(0.6))
    clients = [CachedClient(backend, ResponseCache(path)) for _ in range(2)]
    out = [None, None]

    def ask(i):
        out[i] = clients[i].chat(MSG)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(backend.calls) == 1
    assert {r.text for r in out} == {"answer to hello"} and sorted(r.cached for r in out) == [False, True]


def _ask_in_process(path, delay, queue):
    client = CachedClient(ScriptedBackend(_slow_echo(delay), Provenance("scripted", "proc")), ResponseCache(path))
    reply = client.chat(MSG)
    queue.put((reply.text, reply.cached, client.calls_made))


def test_two_processes_pay_for_one_call(tmp_path):
    path = tmp_path / "c.sqlite"
    ResponseCache(path)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_ask_in_process, args=(str(path), 1.5, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert sorted(r[2] for r in results) == [0, 1]  # exactly one process called the model
    assert {r[0] for r in results} == {"answer to hello"}


def test_claim_of_a_dead_worker_is_taken_over(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = ScriptedBackend(_slow_echo(0))
    client = CachedClient(backend, cache)
    key = request_key("scripted", "scripted", MSG, GenerationOptions())
    import socket
    dead_owner = f"{socket.gethostname()}:999999999:deadbeef"  # no such pid
    claim = cache.claim(key, backend="scripted", model="scripted", request={}, owner=dead_owner, lease_s=3600)
    assert claim.state == "claimed" and cache.stats()["pending"] == 1
    start = time.perf_counter()
    assert client.chat(MSG).text == "answer to hello"
    assert time.perf_counter() - start < 5 and cache.stats() == {"answers": 1, "pending": 0, "failures": 0}


def test_failure_is_recorded_released_and_retried_next_run(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    state = {"fail": True}

    def respond(messages):
        if state["fail"]:
            raise LLMError("transient outage")
        return "fine"

    backend = ScriptedBackend(respond)
    with pytest.raises(LLMError, match="transient outage"):
        CachedClient(backend, cache, retries=1, backoff=0.01).chat(MSG)
    assert cache.stats() == {"answers": 0, "pending": 0, "failures": 2}
    state["fail"] = False  # the next run calls again and caches the answer
    assert CachedClient(backend, cache).chat(MSG).text == "fine"
    assert CachedClient(backend, cache).chat(MSG).cached
    assert len(backend.calls) == 3


def test_backend_exception_and_non_text_become_llm_errors(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")

    def boom(messages):
        raise KeyError("weird")

    with pytest.raises(LLMError, match="KeyError"):
        CachedClient(ScriptedBackend(boom), cache, retries=0).chat(MSG)
    with pytest.raises(LLMError, match="not text"):
        CachedClient(ScriptedBackend(lambda m: None), cache, retries=0).chat(MSG)
    assert cache.stats()["answers"] == 0


def test_request_is_stored_for_inspection(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    CachedClient(ScriptedBackend(_slow_echo(0)), cache).chat(MSG, GenerationOptions(max_tokens=12))
    row = cache._conn().execute("SELECT backend, model, request FROM responses").fetchone()
    assert (row["backend"], row["model"]) == ("scripted", "scripted")
    assert json.loads(row["request"]) == {"messages": MSG, "options": {"temperature": 0.0, "seed": 0, "max_tokens": 12}}
