"""Zero-shot prompt, generation through a client, and imported answers."""
from __future__ import annotations

import pytest

from pipeline.generation.answers import AnswersFormatError, generate_answers, import_answers, zero_shot_messages
from pipeline.llm import CachedClient, LLMError, ResponseCache, ScriptedBackend


def test_zero_shot_prompt_holds_the_query_and_no_passage():
    messages = zero_shot_messages("  who is robert gray ")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"].endswith("Question: who is robert gray\nAnswer:")


def test_generation_records_model_prompt_and_failures(tmp_path):
    def respond(messages):
        if "fail" in messages[-1]["content"]:
            raise LLMError("server down", retryable=False)
        return "An answer."

    client = CachedClient(ScriptedBackend(respond), ResponseCache(tmp_path / "c.sqlite"), retries=0)
    gen = generate_answers(client, {"1": "what is x", "2": "please fail"})
    assert gen.answers == {"1": "An answer."} and "server down" in gen.failed["2"]
    assert gen.provenance["backend"] == "scripted" and gen.prompt["kind"] == "zero-shot"
    assert gen.options == {"temperature": 0.0, "seed": 0, "max_tokens": 256, "think": False, "num_ctx": None}
    assert gen.name == "scripted:scripted" and gen.finish_reasons == {"1": "unknown"}


def test_generation_records_the_options_sent_and_finish_reasons(tmp_path):
    from pipeline.llm.base import Completion

    backend = ScriptedBackend(lambda m: Completion("Cut short", "length"))
    client = CachedClient(backend, ResponseCache(tmp_path / "c.sqlite"), retries=0,
                          overrides={"max_tokens": 16, "temperature": 0.5})
    gen = generate_answers(client, {"1": "what is x"})
    assert gen.options["max_tokens"] == 16 and gen.options["temperature"] == 0.5
    assert gen.finish_reasons == {"1": "length"}


def test_a_generation_without_one_answer_is_a_failed_step(tmp_path):
    def respond(messages):
        raise LLMError("server error 500", retryable=False)

    client = CachedClient(ScriptedBackend(respond), ResponseCache(tmp_path / "c.sqlite"), retries=0)
    with pytest.raises(LLMError, match="all 2 generation calls failed; the first: server error 500"):
        generate_answers(client, {"1": "what is x", "2": "what is y"})


def test_import_answers_and_its_errors(tmp_path):
    good = tmp_path / "a.jsonl"
    good.write_text('{"qid": "1", "text": "one"}\n\n{"qid": 2, "text": "two"}\n')
    gen = import_answers("llama3.2:3b-study", good, known_qids={"1": "", "2": ""})
    assert gen.answers == {"1": "one", "2": "two"} and gen.provenance["backend"] == "imported"
    cases = {'{"qid": "1", "text": "a"}\nnot json\n': ":2: not JSON",
             # the whole decoder message, not cut at "Invalid control character at"
             '{"qid": "1", "text": "a\tb"}\n': r":1: not JSON: Invalid control character at \(column 24\)",
             '{"qid": "1"}\n': ':1: expected an object with "qid" and "text"',
             '{"qid": "1", "text": 3}\n': ':1: "text" must be a string',
             '{"qid": "1", "text": "a"}\n{"qid": "1", "text": "b"}\n': ":2: query 1 appears twice",
             '{"qid": "9", "text": "a"}\n': ":1: query 9 is not a topic"}
    for i, (content, message) in enumerate(cases.items()):
        path = tmp_path / f"bad{i}.jsonl"
        path.write_text(content)
        with pytest.raises(AnswersFormatError, match=message):
            import_answers("x", path, known_qids={"1": ""})
