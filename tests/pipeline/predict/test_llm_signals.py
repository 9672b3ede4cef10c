"""The predictors beyond retrieval: hand cases, absent with a reason (never 0) where no log-probabilities
exist, the scripted reply path through the response cache, and the real llama.cpp backend."""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from pipeline.judging.judgments import Judgments
from pipeline.predict import llm_signals
from tests.support.llm_helpers import scripted_client


def test_mean_token_logprob_reads_each_generated_tokens_own_log_probability():
    steps = [{"Paris": -0.1, "The": -2.0}, {" is": -0.5, ",": -1.5}, {"!": -3.0}]
    assert llm_signals.mean_token_logprob(steps, ["Paris", " is", "."]) == pytest.approx((-0.1 - 0.5) / 2)
    assert llm_signals.mean_token_logprob(steps, ["x", "y", "z"]) is None


def test_expected_grade_spread_is_the_population_sd_over_a_querys_pairs():
    spread = llm_signals.expected_grade_spread({"q1": {"a": 1.0, "b": 3.0, "c": 2.0}, "q2": {"a": 2.5}})
    assert spread == {"q1": pytest.approx(math.sqrt(2 / 3))}  # one pair has no spread: left out


def judgments(expected, backend="embedded"):
    return Judgments(judge="j", setup="binary", provenance={"backend": backend, "label": f"{backend}:m"},
                     labels={"q1": {"a": 1}}, labels_binary=False, expected=expected)


def test_a_judge_without_expected_grades_has_no_predictor_and_says_why():
    absent = llm_signals.judge_spread_predictor(judgments({}, backend="imported"))
    assert isinstance(absent, llm_signals.Absent) and "imported judgments hold labels only" in absent.reason
    assert "returned no log-probabilities" in llm_signals.judge_spread_predictor(judgments({})).reason
    name, values, info = llm_signals.judge_spread_predictor(judgments({"q1": {"a": 0.0, "b": 2.0}}))
    assert name == "expected_grade_sd[j]" and values == {"q1": 1.0} and info["n_pairs"] == 2


def test_imported_answers_and_backends_without_log_probabilities_are_absent(monkeypatch, tmp_path):
    data = SimpleNamespace(name="d", queries=lambda: {"q1": "what is x"})
    absent = llm_signals.generator_logprob_predictor("mine=answers.jsonl", data)
    assert isinstance(absent, llm_signals.Absent) and "imported answers" in absent.reason
    client = scripted_client(lambda messages: "an answer", tmp_path)
    monkeypatch.setattr("pipeline.llm.make_client", lambda spec, **kw: client)
    absent = llm_signals.generator_logprob_predictor("ollama:some-model", data)
    assert isinstance(absent, llm_signals.Absent) and "returns no token log-probabilities" in absent.reason
    assert client.backend.calls == []  # nothing was asked


def test_answer_logprobs_through_the_cache(tmp_path):
    reply = {"content": "Paris is.", "tokens": ["Paris", " is", "."],
             "top_logprobs": [{"Paris": -0.2}, {" is": -0.4}, {".": -0.6}]}
    client = scripted_client(lambda messages: json.dumps(reply), tmp_path)
    values, counts = llm_signals.answer_logprobs(client, {"q1": "capital of France?", "q2": "again?"},
                                                 {"q1": "Paris is.", "q2": "something else"})
    assert values == {"q1": pytest.approx(-0.4), "q2": pytest.approx(-0.4)}
    assert counts["n_text_differs_from_generation"] == 1 and counts["options"]["top_logprobs"] == 5
    llm_signals.answer_logprobs(client, {"q1": "capital of France?"})
    assert len(client.backend.calls) == 2  # the second ask came from the response cache


def test_the_embedded_llama_cpp_backend_gives_the_greedy_answers_log_probabilities(embedded_model, monkeypatch):
    from pipeline.generation.answers import GENERATION_OPTIONS, zero_shot_messages
    from pipeline.llm import make_client

    monkeypatch.setenv("IRDASH_LLM_THREADS", "1")
    client = make_client("embedded:smollm2", step="generation")
    queries = {"q1": "what is the capital of france"}
    plain = client.chat_many([zero_shot_messages(queries["q1"])], GENERATION_OPTIONS)[0].text
    values, counts = llm_signals.answer_logprobs(client, queries, {"q1": plain})
    assert values["q1"] < 0 and counts["n_text_differs_from_generation"] == 0
