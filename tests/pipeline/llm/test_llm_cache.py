"""Response cache and CachedClient: hits make no call, failures are never answers, concurrent workers
pay for one call, a dead worker's claim is taken over."""
from __future__ import annotations

import json
import multiprocessing
import threading
import time
from dataclasses import replace

import pytest

from pipeline.llm import CachedClient, GenerationOptions, LLMError, Provenance, ResponseCache, ScriptedBackend
from pipeline.llm.cache import request_key

MSG = [{"role": "user", "content": "hello"}]


def _slow_echo(delay):
    def respond(messages):
        time.sleep(delay)
        return "answer to " + messages[-1]["content"]
    return respond


def test_key_depends_on_backend_model_endpoint_digest_messages_and_options():
    prov = Provenance("ollama", "m", endpoint="http://a:11434", digest="d1")
    base = request_key(prov, MSG, GenerationOptions())
    assert base == request_key(prov, [dict(MSG[0])], GenerationOptions())
    # the label, note, smallness and how auto resolved do not change the answer: same key
    assert base == request_key(replace(prov, note="x", resolved_from="auto", fallback="why"), MSG, GenerationOptions())
    assert len({base, request_key(replace(prov, backend="openai"), MSG, GenerationOptions()),
                request_key(replace(prov, model="m2"), MSG, GenerationOptions()),
                request_key(replace(prov, endpoint="http://b:11434"), MSG, GenerationOptions()),
                request_key(replace(prov, digest="d2"), MSG, GenerationOptions()),
                request_key(prov, [{"role": "user", "content": "hello!"}], GenerationOptions()),
                request_key(prov, MSG, GenerationOptions(seed=1)),
                request_key(prov, MSG, GenerationOptions(max_tokens=10)),
                request_key(prov, MSG, GenerationOptions(think=True)),
                request_key(prov, MSG, GenerationOptions(num_ctx=4096))}) == 10


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
    key = request_key(Provenance("scripted", "scripted"), MSG, GenerationOptions())
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
    assert json.loads(row["request"]) == {"messages": MSG, "options": {"temperature": 0.0, "seed": 0, "max_tokens": 12,
                                                                       "think": False, "num_ctx": None}}


class _BatchBackend(ScriptedBackend):
    """A scripted backend that also answers in batches (like the embedded model)."""
    supports_batch = True

    def __init__(self, fail=False):
        super().__init__(lambda m: "single " + m[-1]["content"])
        self.batches = []
        self.fail = fail

    def complete_batch(self, requests, options):
        self.batches.append([r[-1]["content"] for r in requests])
        if self.fail:
            raise LLMError("batch failed")
        return ["batched " + r[-1]["content"] for r in requests]


def test_chat_many_batches_misses_only(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = _BatchBackend()
    client = CachedClient(backend, cache, batch_size=3)
    client.chat([{"role": "user", "content": "b"}])  # cached before the batch run
    requests = [[{"role": "user", "content": c}] for c in "abcdeab"]
    replies = client.chat_many(requests)
    assert [r.text for r in replies] == ["batched a", "single b", "batched c", "batched d", "batched e",
                                         "batched a", "single b"]
    assert sorted(map(sorted, backend.batches)) == [["a", "c", "d"], ["e"]]  # b was a hit, repeats asked once
    assert [r.cached for r in replies][1] and cache.stats() == {"answers": 5, "pending": 0, "failures": 0}


def test_failed_batch_fails_each_slot_and_caches_nothing(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = CachedClient(_BatchBackend(fail=True), cache, batch_size=4, retries=1, backoff=0.01)
    replies = client.chat_many([[{"role": "user", "content": c}] for c in "xy"])
    assert all(isinstance(r, LLMError) for r in replies)
    assert cache.stats() == {"answers": 0, "pending": 0, "failures": 4}  # 2 attempts x 2 requests
