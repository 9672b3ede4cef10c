"""What a step may ask of any client is declared on ``pipeline.llm.base.ChatClient`` (``backend``,
``effective_options``) and what it may read of a generation on ``Generation``, so the steps read them
without probing: the Ray fan-out answers like the client it wraps, and a stored generation from before
a field existed reads that field's default. No Ray task is started (only the clients are built)."""
from __future__ import annotations

from types import SimpleNamespace

from core.ray_cluster import RaySettings
from pipeline.generation.answers import Generation, generate_answers
from pipeline.generation.h2g import truncated_answers
from pipeline.judging.judgments import LOGPROB_ALTERNATIVES, umbrela_options
from pipeline.llm.base import ChatClient, GenerationOptions, LLMReply, Provenance, ScriptedBackend
from pipeline.llm.cache import ResponseCache
from pipeline.llm.client import CachedClient
from pipeline.llm.ray_fanout import RayChatClient
from pipeline.predict import llm_signals
from tests.support.llm_helpers import scripted_client

RAY = RaySettings(executor="ray", cpus_per_run=1)


class _LogprobBackend(ScriptedBackend):
    supports_logprobs = True


def _fanned_out(client):
    return RayChatClient(client, settings=RAY, backend=client.backend)


def test_a_judge_behind_the_ray_fan_out_is_asked_for_log_probabilities_like_a_local_one(tmp_path):
    """Reproduction: the fan-out had no ``backend``, so UMBRELA asked it for no log-probabilities (other
    cache keys than the same judge run locally, and no expected grades)."""
    local = CachedClient(_LogprobBackend(lambda messages: "{}"), ResponseCache(tmp_path / "c.sqlite"))
    assert umbrela_options(local).top_logprobs == LOGPROB_ALTERNATIVES
    assert umbrela_options(_fanned_out(local)) == umbrela_options(local)


def test_the_generator_log_probability_predictor_reads_the_backend_behind_the_ray_fan_out(tmp_path, monkeypatch):
    """Reproduction: ``--executor ray`` made the predictor fail with AttributeError (no ``backend``)."""
    client = scripted_client(lambda messages: "an answer", tmp_path)
    monkeypatch.setattr("pipeline.llm.make_client", lambda spec, **kw: _fanned_out(client))
    data = SimpleNamespace(name="d", queries=lambda: {"q1": "what is x"})
    absent = llm_signals.generator_logprob_predictor("ollama:some-model", data)
    assert isinstance(absent, llm_signals.Absent) and "returns no token log-probabilities" in absent.reason
    assert client.backend.calls == []


def test_the_fan_out_sends_the_options_of_the_client_it_wraps(tmp_path):
    client = scripted_client(lambda messages: "an answer", tmp_path)
    client.overrides = {"max_tokens": 7}
    assert _fanned_out(client).effective_options(GenerationOptions(max_tokens=256)).max_tokens == 7


def test_a_client_that_declares_only_its_calls_sends_the_steps_options():
    """The base class's defaults: no overrides, so the answers record the step's own options."""

    class Minimal(ChatClient):
        provenance = Provenance("scripted", "minimal")
        backend = ScriptedBackend(lambda messages: "unused")

        def chat_many(self, requests, options=None, progress=None, on_progress=None):
            return [LLMReply("an answer", self.provenance, cached=False, seconds=0.0, finish_reason="stop")
                    for _ in requests]

    options = GenerationOptions(temperature=0.0, seed=3, max_tokens=64)
    gen = generate_answers(Minimal(), {"q1": "what is x"}, options=options)
    assert gen.answers == {"q1": "an answer"} and gen.options == options.as_dict()


def test_a_generation_stored_before_finish_reasons_and_not_generated_reads_their_defaults():
    stored = {"name": "g", "provenance": {"backend": "ollama", "model": "m"}, "answers": {"q1": "an answer"}}
    gen = Generation.from_dict(stored)
    assert gen.finish_reasons == {} and gen.not_generated == {} and truncated_answers(gen) == []
