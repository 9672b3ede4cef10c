"""Empty and truncated replies are failures, never answers; reasoning is stripped and off by default;
the finish reason is kept with every answer (issue 18, item 3). Against the loopback server, through
the real ``ollama`` and ``openai`` clients."""
from __future__ import annotations

import pytest

from pipeline.llm import CachedClient, GenerationOptions, LLMError, ResponseCache, ScriptedBackend
from pipeline.llm.backends.ollama_backend import OllamaBackend
from pipeline.llm.backends.openai_backend import OpenAICompatibleBackend
from pipeline.llm.replies import strip_reasoning

MESSAGES = [{"role": "user", "content": "what is a lobster roll?"}]


def _backend(kind, server, model):
    if kind == "ollama":
        return OllamaBackend(model, host=server.url, timeout=10)
    return OpenAICompatibleBackend(model, base_url=server.url + "/v1", timeout=10)


def _last_chat_body(server):
    return [body for path, body in server.requests if path in ("/api/chat", "/v1/chat/completions")][-1]


def test_strip_reasoning_removes_closed_and_unclosed_blocks():
    assert strip_reasoning("<think>a\nb</think>\n\nThe answer.") == "The answer."
    assert strip_reasoning("Answer <think>x</think>here") == "Answer here"
    assert strip_reasoning("<think>still reasoning when the budget ran out") == ""
    assert strip_reasoning("<think>done</think>Paris. <think>second thoughts, cut") == "Paris."
    assert strip_reasoning("no reasoning at all") == "no reasoning at all"


def test_ollama_sends_think_false_by_default_and_true_on_request(server, cache):
    client = CachedClient(_backend("ollama", server, "qwen3:8b"), cache, retries=0)
    client.chat(MESSAGES, GenerationOptions())
    assert _last_chat_body(server)["think"] is False
    client.chat(MESSAGES, GenerationOptions(think=True))
    assert _last_chat_body(server)["think"] is True


def test_openai_compatible_sends_enable_thinking(server, cache):
    client = CachedClient(_backend("openai", server, "qwen3:8b"), cache, retries=0)
    client.chat(MESSAGES, GenerationOptions())
    assert _last_chat_body(server)["chat_template_kwargs"] == {"enable_thinking": False}


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_empty_reply_is_a_recorded_failure_not_an_answer(server, cache, kind):
    client = CachedClient(_backend(kind, server, "empty"), cache, retries=2, backoff=0.01)
    with pytest.raises(LLMError, match="empty reply"):
        client.chat(MESSAGES, GenerationOptions())
    assert client.calls_made == 1  # deterministic: retrying would get the same empty reply
    assert cache.stats() == {"answers": 0, "pending": 0, "failures": 1}
    assert "empty reply" in cache.failures()[0]["error"]


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_reply_cut_while_reasoning_is_a_recorded_failure(server, cache, kind):
    client = CachedClient(_backend(kind, server, "thinker"), cache, retries=0)
    with pytest.raises(LLMError, match="cut at max_tokens with reasoning"):
        client.chat(MESSAGES, GenerationOptions(max_tokens=16))
    assert cache.stats()["answers"] == 0 and len(cache.failures()) == 1
    out = client.chat_many([MESSAGES, [{"role": "user", "content": "other"}]], GenerationOptions(max_tokens=16))
    assert all(isinstance(r, LLMError) for r in out) and cache.stats()["answers"] == 0


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_finish_reason_is_stored_with_the_answer(server, cache, kind):
    client = CachedClient(_backend(kind, server, "llama3.2:3b"), cache, retries=0)
    first = client.chat(MESSAGES, GenerationOptions())
    again = client.chat(MESSAGES, GenerationOptions())
    assert (first.finish_reason, first.cached) == ("stop", False)
    assert (again.finish_reason, again.cached) == ("stop", True)
    many = client.chat_many([MESSAGES], GenerationOptions())
    assert many[0].finish_reason == "stop"


def test_every_backend_is_checked_not_only_the_http_ones(tmp_path):
    """A backend that returns plain text (scripted, or a new one) gets the same treatment."""
    replies = {"a": "<think>unclosed reasoning", "b": "  ", "c": "<think>x</think> fine"}
    client = CachedClient(ScriptedBackend(lambda m: replies[m[-1]["content"]]),
                          ResponseCache(tmp_path / "c.sqlite"), retries=0)
    out = client.chat_many([[{"role": "user", "content": k}] for k in "abc"])
    assert isinstance(out[0], LLMError) and isinstance(out[1], LLMError)
    assert out[2].text == "fine" and out[2].finish_reason == "unknown"  # the backend did not say
    assert client.cache.stats() == {"answers": 1, "pending": 0, "failures": 2}


def test_length_truncated_answer_is_kept_and_says_so(tmp_path):
    from pipeline.llm.base import Completion

    client = CachedClient(ScriptedBackend(lambda m: Completion("A lobster roll is a sandwich of", "length")),
                          ResponseCache(tmp_path / "c.sqlite"), retries=0)
    reply = client.chat(MESSAGES)
    assert reply.text == "A lobster roll is a sandwich of" and reply.finish_reason == "length"
    assert client.chat(MESSAGES).finish_reason == "length"  # from the cache


def test_an_older_cache_gains_the_finish_reason_column(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, "
                 "request TEXT NOT NULL, status TEXT NOT NULL, response TEXT, seconds REAL, owner TEXT, "
                 "claimed_at REAL, lease_until REAL, created_at REAL NOT NULL)")
    conn.execute("INSERT INTO responses VALUES ('k', 'b', 'm', '{}', 'ok', 'old answer', 1.0, NULL, NULL, NULL, 0)")
    conn.commit()
    conn.close()
    cache = ResponseCache(path)
    hit = cache.lookup("k")
    assert (hit.text, hit.finish_reason) == ("old answer", "unknown")
