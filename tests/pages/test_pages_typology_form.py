"""The Failure typology page's Start form (issue 30, item 12): the model note comes from the configured
model's identity (it said "the embedded 135M model" while the default was the 1.5B), and the form has
the CLI's max-rounds field, checked before anything is queued."""
from __future__ import annotations

from pipeline.llm import gguf_models
from pipeline.views import failure_typology as view
from tests.pages.support import app_page


def _note(at) -> str:
    return next(t.value for t in at.text if "cap the queries" in t.value or "runs on its server" in t.value
                or t.value.startswith("Model "))


def test_the_model_note_names_the_configured_embedded_model(cache):
    default = gguf_models.resolve(None)
    at = app_page("failure-typology")
    note = _note(at)
    assert f"{default.name} ({default.size_label} parameters)" in note and note.startswith("auto: ")
    assert gguf_models.SMOLLM2.size_label not in note  # not the 135M test model
    at.text_input[0].set_value("embedded:smollm2").run()
    assert f"{gguf_models.SMOLLM2.name} ({gguf_models.SMOLLM2.size_label} parameters)" in _note(at)
    at.text_input[0].set_value("embedded:qwen2.5-coder-0.5b").run()
    assert gguf_models.QWEN_05B.name in _note(at)
    at.text_input[0].set_value("ollama:qwen3:8b").run()
    assert "runs on its server" in _note(at)
    at.text_input[0].set_value("embedded:nope").run()
    assert "unknown embedded model 'nope'" in _note(at)
    assert not any("135M" in c.value for c in at.caption)


def test_model_note_without_a_page():
    assert gguf_models.resolve(None).name in view.model_note("embedded")
    assert gguf_models.SMOLLM2.name in view.model_note("embedded:smollm2-transformers")


def _rounds(at):
    return next(n for n in at.number_input if n.label == view.forms.TYPOLOGY_ROUNDS.label)


def test_the_form_has_the_max_rounds_field_and_queues_what_it_says(cache):
    from core import jobs

    at = app_page("failure-typology")
    assert _rounds(at).value == view.DEFAULT_MAX_ROUNDS == 6  # the command's default (--max-rounds)
    _rounds(at).set_value(3)
    next(b for b in at.button if b.label == "Start").click().run()
    assert not at.exception and not at.error
    (job,) = view.TYPOLOGY.jobs()
    assert job.command[job.command.index("--max-rounds") + 1] == "3"
    jobs.cancel(job.id)


def test_an_invalid_max_rounds_is_refused_and_nothing_is_queued(cache):
    at = app_page("failure-typology")
    for bad in (0, -2):
        _rounds(at).set_value(bad)
        next(b for b in at.button if b.label == "Start").click().run()
        assert not at.exception
        assert [e.value for e in at.error] == [f"Nothing was started. Max rounds: expected an integer >= 1, got {bad}."]
        assert view.TYPOLOGY.jobs() == []
    # both bad fields named at once
    next(n for n in at.number_input if n.label == view.forms.TYPOLOGY_QUERIES.label).set_value(-5)
    next(b for b in at.button if b.label == "Start").click().run()
    assert "Max queries (0 = all): expected an integer >= 0 (0 = no limit), got -5; Max rounds" in at.error[0].value
    assert view.TYPOLOGY.jobs() == []
