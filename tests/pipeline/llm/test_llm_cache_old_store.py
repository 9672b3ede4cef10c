"""An LLM response cache written by the code before the versioned migrations (main at 20028e0,
``tests/fixtures/old_stores/``) opens with the current code: every row reads back as before, stored
answers are hits with their finish reasons, and new calls are claimed and stored."""
from __future__ import annotations

from pipeline.llm.cache import ResponseCache
from tests.support.old_stores import copy_old_store, rows_as_before, versions


def test_an_old_response_cache_reads_back_identically_and_takes_new_answers(tmp_path):
    path = copy_old_store("llm/responses.sqlite", tmp_path)
    cache = ResponseCache(path)
    rows_as_before(path, "llm/responses.sqlite")
    assert (cache.lookup("k-ok").text, cache.lookup("k-ok").finish_reason) == ("an answer", "stop")
    assert cache.lookup("k-cut").finish_reason == "length"
    assert cache.stats() == {"answers": 2, "pending": 1, "failures": 1}
    assert [(f["key"], f["error"], f["step"]) for f in cache.failures()] == [("k-fail", "timeout", "generation")]
    assert cache.answers_by_model() == [{"backend": "ollama", "model": "qwen", "step": "generation", "answers": 2}]
    assert cache.claim("k-new", backend="ollama", model="qwen", request={}, owner="me", lease_s=60,
                       step="generation").state == "claimed"
    cache.put("k-new", "new answer", seconds=0.1, owner="me", finish_reason="stop")
    assert cache.claim("k-ok", backend="ollama", model="qwen", request={}, owner="me", lease_s=60).state == "hit"
    assert cache.get("k-new") == "new answer"
    cache.close()
    assert [(s, v) for s, v, _ in versions(path)] == [("llm-responses", 4)]
