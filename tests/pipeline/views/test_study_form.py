"""The Failure overlap form refuses a malformed LLM spec before anything is queued, naming the field
(issue 33: ``nonsense:::model`` queued job #23, which ran the retrievers and then failed with "unknown
LLM spec"). The check is the command line's (:func:`pipeline.llm.specs.check_spec`)."""
from __future__ import annotations

import pytest

from core import jobs
from core.fields import FormError
from pipeline.views import failure_overlap as view
from pipeline.views import forms


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize("options, field", [
    ({"generator": "nonsense:::model", "llm_judge": "embedded"}, forms.STUDY_GENERATOR.label),
    ({"generator": "auto", "llm_judge": "nonsense:::model"}, forms.STUDY_LLM_JUDGE.label),
    ({"generator": "openai:model-without-url", "llm_judge": ""}, forms.STUDY_GENERATOR.label),
    ({"generator": "embedded:no-such-model", "llm_judge": "embedded"}, forms.STUDY_GENERATOR.label),
    ({"generator": "", "llm_judge": "embedded"}, forms.STUDY_GENERATOR.label),  # no generator at all
    ({"generator": " ", "imported_generators": [], "llm_judge": "embedded"}, forms.STUDY_GENERATOR.label),
])
def test_a_malformed_llm_spec_is_refused_naming_its_field_and_nothing_is_queued(cache, options, field):
    with pytest.raises(FormError) as refused:
        view.submit_study("dl19", None, **options)
    assert f"{field}: " in str(refused.value) and str(refused.value).startswith("Nothing was started.")
    assert not jobs.list_jobs()


def test_well_formed_specs_pass_without_asking_a_server():
    # no server listens at 127.0.0.1:9, and no model is loaded: the check builds the backend only
    for spec in ("auto", "embedded", "embedded:smollm2", "ollama:qwen3:8b@http://127.0.0.1:9",
                 "openai:Qwen/Qwen3-8B@http://127.0.0.1:9/v1", "embedded:smollm2-transformers"):
        assert forms.STUDY_GENERATOR.problem(spec) is None, spec
    assert forms.STUDY_LLM_JUDGE.problem("") is None  # no LLM judge: the imported ones only
