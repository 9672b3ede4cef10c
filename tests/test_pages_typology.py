"""The "Failure typology" and "Annotate reasons" pages (AppTest) on runs made with a scripted model."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core import jobs
from pipeline import typology_view as view
from pipeline.annotations import AnnotationStore
from pipeline.typology.induction import HardQuery, InductionConfig
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore
from tests.llm_helpers import scripted_client

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 60
HOSTILE = "<script>alert('x')</script> <b>not bold</b>"
CATEGORIES = [{"name": "Ambiguity", "description": "the subject is vague"},
              {"name": "Numbers", "description": "asks for a figure"},
              {"name": "Jargon", "description": "product terms"}]


def respond(messages):
    text = messages[-1]["content"]
    if "In one sentence" in text:
        return "Reason: it is vague"
    if "Which of these categories" in text:
        if "query one" in text:
            return '[{"category": "Ambiguity", "justification": "two senses <i>x</i>"}, {"category": "Numbers", "justification": "a price"}]'
        if "query three" in text:
            return "[]"  # the model sees no reason
        return '[{"category": "Numbers", "justification": "asks how many"}]'
    return json.dumps(CATEGORIES)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("IRDASH_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")
    st.cache_data.clear()
    st.cache_resource.clear()
    return tmp_path / "cache"


@pytest.fixture
def runs(cache, tmp_path):
    queries = [HardQuery("q1", "query one " + HOSTILE, "Top passages:\n[1] (grade 0) " + HOSTILE),
               HardQuery("q2", "query two", "Top passages:\n[1] (grade 1) something"),
               HardQuery("q3", "query three", "Top passages:\n[1] (grade 0) other")]
    client = scripted_client(respond, tmp_path)
    with TypologyStore() as store:
        out = [run_typology(client, store, dataset=ds, task="h2r", queries=queries, hard_set={"n_hard": 3},
                            config=InductionConfig(batch_size=3)) for ds in ("dl19", "dl20")]
    return out


def _app(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("text", "markdown", "caption", "info", "warning", "error", "success")
                     for e in getattr(at, kind))


def test_typology_page_without_runs(cache):
    at = _app("failure-typology")
    assert at.title[0].value == "Failure typology"
    assert "No typology run yet" in _texts(at)


def test_typology_page_shows_reasons_rounds_and_queries(runs):
    at = _app("failure-typology")
    assert at.selectbox[0].value == "dl19" and at.selectbox[1].value == "h2r"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Hard queries"] == "3" and metrics["Categories"] == "3" and metrics["Rounds"] == "2"
    reasons = at.dataframe[0].value.set_index("category")
    assert reasons["queries"].to_dict() == {"Ambiguity": 1, "Numbers": 2, "Jargon": 0}
    assert HOSTILE in reasons.loc["Ambiguity", "examples"]  # raw text in a table cell, never rendered
    rounds = at.dataframe[1].value
    assert rounds["round"].tolist() == [1, 2] and rounds["unchanged"].tolist() == [False, True]
    queries = at.dataframe[2].value.set_index("qid")
    assert queries.loc["q1", "reasons"] == "Ambiguity | Numbers"
    texts = _texts(at)
    assert f"Query: query one {HOSTILE}" in texts and "• Ambiguity: two senses <i>x</i>" in texts
    link = at.get("page_link")[0].proto
    assert (link.page, link.query_string) == ("annotate-reasons", "dataset=dl19&task=h2r&qid=q1")
    at.selectbox[0].set_value("dl20").run()
    assert not at.exception and at.dataframe[0].value["queries"].tolist() == [1, 2, 0]


def test_typology_page_queues_a_background_job(runs):
    at = _app("failure-typology")
    at.number_input[0].set_value(4)
    at.checkbox[0].check()
    at.button[0].click().run()
    assert not at.exception
    (job,) = view.typology_jobs()
    assert job.command[2:] == ["pipeline", "typology", "--dataset", "dl19", "--task", "h2r", "--llm", "auto",
                               "--max-rounds", "6", "--max-queries", "4", "--typology", "study"]
    jobs.cancel(job.id)


def test_annotate_page_name_sample_answers_tags_and_notes(runs):
    at = _app("annotate-reasons")
    assert at.title[0].value == "Annotate reasons" and not at.tabs
    at.text_input[0].input("ann")
    at.button[0].click().run()  # the form's submit button
    assert not at.exception and at.session_state["annotator"] == "ann"
    assert at.query_params["annotator"] == "ann"
    assert "No annotation sample yet" in _texts(at)
    at.number_input[0].set_value(4)
    at.button[1].click().run()  # "Create sample" (button 0 is "Switch annotator")
    assert not at.exception, [e.value for e in at.exception]
    with AnnotationStore() as store:
        queue = store.queue("ann")
    assert len(queue) == 4  # of the 6 items (2 datasets x 3 queries), all H2R
    assert at.progress[0].value == 0
    first = queue[0]
    assert f"Query 1 of 4 · {first.dataset.upper()}" in _texts(at)
    assert at.query_params["qid"] == first.qid
    at.button(key="yes-0").click().run()
    assert not at.exception
    with AnnotationStore() as store:
        answers = store.answers("ann", first)
    assert answers[first.assigned_names[0]] == 1
    if len(first.assigned_names) == 1:
        assert "1 of 4 queries complete" in at.progress[0].proto.text
    for i in range(1, len(first.assigned_names)):
        at.button(key=f"no-{i}").click().run()
    others = [c["name"] for c in first.categories if c["name"] not in first.assigned_names]
    at.pills[0].set_value([others[0]]).run()
    at.text_area[0].input("plain <b>note</b>").run()
    assert not at.exception
    with AnnotationStore() as store:
        assert store.answers("ann", first)[others[0]] == 1
        assert store.completed("ann") == {first.decision_key}
        assert store.note("ann", first)["note"] == "plain <b>note</b>"
    next(b for b in at.button if b.label == "Next query →").click().run()
    assert f"Query 2 of 4 · {queue[1].dataset.upper()}" in _texts(at)
    # the Validation tab: a second annotator's CSV merges in, then the figures and the kappa table
    rows = [{"annotator": "bob", "dataset": first.dataset, "task": "h2r", "qid": first.qid, "category": c["name"],
             "llm_assigned": int(c["name"] in first.assigned_names), "human_applicable": 1} for c in first.categories]
    with AnnotationStore() as store:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        path = store.path.parent / "bob.csv"
        path.write_text(buf.getvalue())
        store.import_csv(path)
    at.run()
    overall = at.tabs[1].dataframe[1].value.set_index("against")
    assert set(overall.index) == {"ann", "bob", "union of annotators"}
    assert overall.loc["bob", "decisions"] == 3 and overall.loc["bob", "queries"] == 1
    kappa = at.tabs[1].dataframe[3].value.set_index("category")
    assert kappa.loc["overall", "decisions"] == 3


def test_annotate_page_opens_the_linked_query(runs):
    with TypologyStore() as store:
        items = view.sample_items(store)
    with AnnotationStore() as store:
        store.create_sample(items, size=6, seed=0)
        queue = store.queue("ann")
        target = queue[4]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"annotator": "ann", "dataset": target.dataset, "task": target.task, "qid": target.qid})
    at.run()
    at.switch_page("pages/annotate-reasons.py").run()
    assert not at.exception
    assert "Query 5 of 6" in _texts(at)
    assert target.query in [t.value for t in at.text]  # plain text, never HTML
    assert at.code[0].value == target.context
    # a query the model gave no reason: "No reason applies" completes it
    position = next(i for i, it in enumerate(queue) if not it.assigned)
    at.query_params.update({"annotator": "ann", "dataset": queue[position].dataset, "task": "h2r",
                            "qid": queue[position].qid})
    at.session_state["queue_of"] = None  # as in a new session opened from a link
    at.run()
    assert f"Query {position + 1} of 6" in _texts(at) and "assigned no reason" in _texts(at)
    next(b for b in at.button if b.label == "No reason applies").click().run()
    assert not at.exception
    with AnnotationStore() as store:
        assert store.completed("ann") == {queue[position].decision_key}
