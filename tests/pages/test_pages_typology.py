"""The "Failure typology" and "Annotate reasons" pages (AppTest) on runs made with a scripted model."""
from __future__ import annotations

import csv
import re
import io
import json

import pytest
from streamlit.testing.v1 import AppTest

from core import jobs
from pipeline.views import annotate_reasons as annotate_view
from pipeline.views import failure_typology as view
from pipeline.annotation.store import AnnotationStore
from pipeline.typology.induction import HardQuery, InductionConfig
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore
from pipeline.llm.base import SMALL_MODEL
from tests.pages.support import APP, TIMEOUT, app_page, page_texts, typology_reply
from tests.support.llm_helpers import scripted_client

HOSTILE = "<script>alert('x')</script> <b>not bold</b>"


@pytest.fixture
def runs(cache, tmp_path):
    queries = [HardQuery("q1", "query one " + HOSTILE, "Top passages:\n[1] (grade 0) " + HOSTILE),
               HardQuery("q2", "query two", "Top passages:\n[1] (grade 1) something"),
               HardQuery("q3", "query three", "Top passages:\n[1] (grade 0) other")]
    client = scripted_client(typology_reply, tmp_path)
    with TypologyStore() as store:
        out = [run_typology(client, store, dataset=ds, task="h2r", queries=queries, hard_set={"n_hard": 3},
                            config=InductionConfig(batch_size=3)) for ds in ("dl19", "dl20")]
    return out


def test_typology_page_without_runs(cache):
    at = app_page("failure-typology")
    assert at.title[0].value == "Failure typology"
    assert "No typology run yet" in page_texts(at)


def test_typology_page_shows_reasons_rounds_and_queries(runs):
    at = app_page("failure-typology")
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
    texts = page_texts(at)
    assert f"Query: query one {HOSTILE}" in texts and "• Ambiguity: two senses <i>x</i>" in texts
    link = at.get("page_link")[0].proto
    assert (link.page, link.query_string) == ("annotate-reasons", "dataset=dl19&task=h2r&qid=q1")
    at.selectbox[0].set_value("dl20").run()
    assert not at.exception and at.dataframe[0].value["queries"].tolist() == [1, 2, 0]


def test_typology_page_queues_a_background_job(runs):
    at = app_page("failure-typology")
    at.number_input[0].set_value(4)
    at.checkbox[0].check()
    at.button[0].click().run()
    assert not at.exception
    (job,) = view.TYPOLOGY.jobs()
    assert job.command[2:-2] == ["pipeline", "typology", "--dataset", "dl19", "--task", "h2r", "--assigner", "auto",
                                 "--max-rounds", "6", "--max-queries", "4", "--typology", "study"]
    # the job writes a progress record under the key its meta names (the jobs table reads it)
    assert job.command[-2] == "--progress-key" and job.meta["progress"] == job.command[-1]
    assert job.command[-1].startswith("typology-")
    jobs.cancel(job.id)


def test_annotate_page_name_sample_answers_tags_and_notes(runs):
    at = app_page("annotate-reasons")
    assert at.title[0].value == "Annotate reasons" and not at.tabs
    at.text_input[0].input("ann")
    at.button[0].click().run()  # the form's submit button
    assert not at.exception and at.session_state["annotator"] == "ann"
    assert at.query_params["annotator"] == "ann"
    assert "No annotation sample yet" in page_texts(at)
    at.number_input[0].set_value(4)
    at.button[1].click().run()  # "Create sample" (button 0 is "Switch annotator")
    assert not at.exception, [e.value for e in at.exception]
    with AnnotationStore() as store:
        queue = store.queue("ann")
    assert len(queue) == 4  # of the 6 items (2 datasets x 3 queries), all H2R
    assert at.progress[0].value == 0
    first = queue[0]
    assert f"Query 1 of 4 · {first.dataset.upper()}" in page_texts(at)
    assert at.query_params["qid"] == first.qid
    # what Streamlit's generic "Connection error" box means here, said beside the answer keys (issue 36)
    assert [c.value for c in at.caption if "Connection error" in c.value] == [annotate_view.OUTAGE_NOTE]
    assert "`make run`" in annotate_view.OUTAGE_NOTE and "marked pending" in annotate_view.OUTAGE_NOTE
    # the browser tests find the outbox's own notice by its words: the note must not repeat them
    assert "not saved yet" not in annotate_view.OUTAGE_NOTE.lower()
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
    assert f"Query 2 of 4 · {queue[1].dataset.upper()}" in page_texts(at)
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
    # what the figures are made of (issue 33: partial queries count by their answered cells)
    assert "6 answered cells: 2 complete queries, 0 partial queries" in page_texts(at)


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
    assert "Query 5 of 6" in page_texts(at)
    assert target.query in [t.value for t in at.text]  # plain text, never HTML
    assert at.code[0].value == target.context
    # a query the model gave no reason: "No reason applies" completes it
    position = next(i for i, it in enumerate(queue) if not it.assigned)
    at.query_params.update({"annotator": "ann", "dataset": queue[position].dataset, "task": "h2r",
                            "qid": queue[position].qid})
    at.session_state["queue_of"] = None  # as in a new session opened from a link
    at.run()
    assert f"Query {position + 1} of 6" in page_texts(at) and "assigned no reason" in page_texts(at)
    next(b for b in at.button if b.label == "No reason applies").click().run()
    assert not at.exception
    with AnnotationStore() as store:
        assert store.completed("ann") == {queue[position].decision_key}


# ------------------------------------------------------------------ provenance, unreadable answers, literal text
MD_HOSTILE = ["[x](javascript:alert(1))", "![img](http://127.0.0.1:9/x.png)", ":smile: **b** <b>c</b>"]


def respond_states(messages):
    """q1: a reason with a Markdown-laden justification; q2: an unreadable answer; q3: no reason."""
    text = messages[-1]["content"]
    if "In one sentence" in text:
        return "Reason: vague"
    if "Which of these categories" in text:
        if "query one" in text:
            return json.dumps([{"category": MD_HOSTILE[0], "justification": "see [here](javascript:alert(2))"}])
        if "query two" in text:
            return "cannot tell <i>sorry</i>"
        return "[]"
    return json.dumps([{"name": n, "description": "d"} for n in MD_HOSTILE])


@pytest.fixture
def h2g_run(cache, tmp_path):
    queries = [HardQuery("q1", "query one", "ctx 1"), HardQuery("q2", "query two", "ctx 2"),
               HardQuery("q3", "query three", "ctx 3")]
    hard_set = {"generator": "embedded", "configuration": {"generator": "embedded:SmolLM2-135M-Instruct"}}
    with TypologyStore() as store:
        return run_typology(scripted_client(respond_states, tmp_path), store, dataset="dl19", task="h2g",
                            queries=queries, hard_set=hard_set, config=InductionConfig(batch_size=3))


def test_literal_markdown_renders_as_the_literal_text():
    markdown_it = pytest.importorskip("markdown_it")
    for name in MD_HOSTILE + ["a_b*c* `d` #e |f| ~g~ $x$ 1. item"]:
        html = markdown_it.MarkdownIt("commonmark").renderInline(view.literal_markdown(name))
        assert "<a" not in html and "<img" not in html and "<strong>" not in html and "<b>" not in html
        assert html.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&") == name


def test_typology_page_names_model_and_generator_and_shows_unreadable_answers(h2g_run):
    at = app_page("failure-typology")
    texts = page_texts(at)
    assert "Reasons produced by scripted:scripted" in texts
    assert "H2G reasons explain the answers of generator embedded:SmolLM2-135M-Instruct." in texts
    assert any("embedded default model" in w.value for w in at.warning)
    assert "Stop: converged" in texts and "Stop: None" not in texts
    q2 = next(i for i, q in enumerate(h2g_run["queries"]) if q["qid"] == "q2")
    next(s for s in at.selectbox if s.label == "Query").set_value("q2").run()
    assert any("The model's answer was unreadable (unparseable)" in e.value for e in at.error)
    assert "cannot tell <i>sorry</i>" in [c.value for c in at.code]
    assert h2g_run["queries"][q2]["raw"] == "cannot tell <i>sorry</i>"
    next(s for s in at.selectbox if s.label == "Query").set_value("q3").run()
    assert "The model assigned no reason to this query." in page_texts(at)


def test_typology_page_draws_no_empty_chart_and_says_what_stopped_a_failed_run(cache, tmp_path):
    def unreadable(messages):
        return "no idea" if "Which of these categories" in messages[-1]["content"] else typology_reply(messages)

    queries = [HardQuery(f"q{i}", f"query {i}", "ctx") for i in (1, 2)]
    with TypologyStore() as store:
        run_typology(scripted_client(unreadable, tmp_path), store, dataset="dl19", task="h2r", queries=queries,
                     hard_set={}, config=InductionConfig(batch_size=2))
    at = app_page("failure-typology")
    assert "No chart: all 2 assignment answers were unreadable" in page_texts(at)
    assert not at.get("plotly_chart")
    result = {"status": "failed", "stop_reason": None, "config": {"max_rounds": 6}}
    assert view.stop_text(result, "model server refused the connection") == \
        "Failed before the typology was complete: model server refused the connection."
    assert view.stop_text({**result, "status": "done", "stop_reason": "max_rounds"}, None) == \
        "Stop: reached the cap of 6 rounds without converging."


def test_annotate_page_text_stays_literal_and_unreadable_is_its_own_state(h2g_run):
    with TypologyStore() as store:
        items = view.sample_items(store)
    with AnnotationStore() as store:
        store.create_sample(items, size=3, seed=0)
        queue = store.queue("ann")
    by_qid = {it.qid: it for it in queue}
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"annotator": "ann", "dataset": "dl19", "task": "h2g", "qid": "q1"})
    at.run()
    at.switch_page("pages/annotate-reasons.py").run()
    assert not at.exception, [e.value for e in at.exception]
    # the justification is plain text (st.text), never a caption that renders Markdown
    assert "see [here](javascript:alert(2))" in [t.value for t in at.text]
    assert not any("javascript" in c.value for c in at.caption)
    pills = at.pills[0]
    names = [c["name"] for c in by_qid["q1"].categories if c["name"] not in by_qid["q1"].assigned_names]
    assert "![img](http://127.0.0.1:9/x.png)" in names  # the model's name, kept as given
    assert list(pills.options) == [view.literal_markdown(n) for n in names]
    assert "H2G reasons explain the answers of generator embedded:SmolLM2-135M-Instruct." in page_texts(at)
    assert any("embedded default model" in w.value for w in at.warning)
    # unreadable: its own state, the raw answer shown, never "assigned no reason"
    at.query_params.update({"qid": "q2"})
    at.session_state["queue_of"] = None
    at.run()
    assert by_qid["q2"].unreadable
    assert any("The model's answer was unreadable" in e.value for e in at.error)
    assert "cannot tell <i>sorry</i>" in [c.value for c in at.code]
    assert "assigned no reason" not in page_texts(at)
    next(b for b in at.button if b.label == "No reason applies").click().run()
    with AnnotationStore() as store:
        assert by_qid["q2"].decision_key in store.completed("ann")
    # after N / the click: shown as chosen and saved, not disabled
    button = next(b for b in at.button if "No reason applies" in b.label)
    assert button.label == "✓ No reason applies (saved)" and not button.disabled
    # the Validation tab: the unreadable query is excluded and counted; the definitions are shown
    assert "Excluded from every figure (never counted as true negatives): 1 queries (3 decisions) with an unreadable" \
           in page_texts(at)
    definitions = at.tabs[1].dataframe[-1].value.set_index("figure")["definition"]
    assert "true negative" in definitions["cell_accuracy"] and "exact_agreement" in definitions.index


def test_generator_of_flags_the_embedded_model_behind_auto():
    auto = {"generator": "auto", "configuration": {"generator": "auto"},
            "generator_model": {"backend": "embedded", "model": "SmolLM2", "label": "embedded:SmolLM2"}}
    assert view.generator_of(auto) == ("embedded:SmolLM2", True)
    ollama = {"generator": "ollama:qwen3:8b", "generator_model": {"backend": "ollama", "label": "ollama:qwen3:8b"}}
    assert view.generator_of(ollama) == ("ollama:qwen3:8b", False)
    assert view.generator_of({}) == ("", False)
    assert view.generator_note("h2r", "embedded", True) == ("", None)


def test_notes_table_shows_readable_dates(runs):
    with TypologyStore() as store:
        items = view.sample_items(store)
    with AnnotationStore() as store:
        store.set_note("ann", items[0], note="a note")
        frame = annotate_view.proposals_frame(store)
    assert frame.loc[0, "note"] == "a note"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", frame.loc[0, "updated"])


def test_a_save_that_fails_is_shown_and_retried_until_stored(runs, cache):
    """Every click is stored, or visibly refused and retried: with the store unreachable (its path is
    a folder, so SQLite cannot open it) the answer is queued with a message; once the store can be
    opened the next run stores it."""
    with TypologyStore() as store:
        item = view.sample_items(store)[0]
    path = annotate_view.annotations_path()
    path.unlink(missing_ok=True)
    path.mkdir(parents=True)
    state = {}
    assert not annotate_view.save_or_queue(state, "ann", item, item.assigned_names[0], True)
    messages = annotate_view.save_problems(state)
    assert messages[0].startswith("Not saved yet (") and "1 answer(s) not saved yet" in messages[-1]
    assert annotate_view.retry_pending(state, "ann") == 1  # still unreachable: kept
    path.rmdir()
    assert annotate_view.retry_pending(state, "ann") == 0 and len(annotate_view.save_problems(state)) == 1  # the failed retry's
    with AnnotationStore() as store:
        assert store.answers("ann", item)[item.assigned_names[0]] == 1
    # a save the store refuses is reported, never queued (it would fail again)
    assert not annotate_view.save_or_queue(state, "ann", item, "Weather", True)
    assert annotate_view.save_problems(state) == ["Not saved: 'Weather' is not a category of this item's typology"]
    assert annotate_view.retry_pending(state, "ann") == 0


def test_reconciled_widget_keeps_the_annotators_change_and_follows_a_store_changed_elsewhere():
    state, drawn = {}, []

    def draw(value):
        def widget(default):
            drawn.append(default)
            state.setdefault("w", default)
            if value is not None:
                state["w"] = value
            return state["w"]
        return widget

    assert annotate_view.reconciled_widget(state, "w", ["A"], draw(None)) == ["A"] and drawn == [["A"]]
    assert annotate_view.reconciled_widget(state, "w", ["A"], draw(["A", "B"])) == ["A", "B"]  # a click: kept
    # a new session (server restart) whose browser sends a value the store lacks: the annotator's
    fresh = {"w": ["C"]}
    assert annotate_view.reconciled_widget(fresh, "w", [], lambda default: fresh["w"]) == ["C"]
    # the store changed elsewhere while the widget still shows its last value: follow the store
    state["w"] = ["B", "A"]
    assert annotate_view.reconciled_widget(state, "w", ["D"], draw(None)) == ["D"]


def test_annotate_state_machine_position_focus_and_tag_changes(runs):
    """The Annotate page's state without its widgets: a new annotator starts at the URL's query (else the
    first open one) with the first unmarked reason highlighted; a mark moves the highlight to the next
    unmarked reason; a tag change stores only what changed."""
    with TypologyStore() as store:
        queue = view.sample_items(store)
    state = {}
    url = {"dataset": queue[2].dataset, "task": queue[2].task, "qid": queue[2].qid}
    assert annotate_view.open_position(state, "ann", "default", queue, set(), url) == 2
    assert annotate_view.open_position(state, "ann", "default", queue, set(), {}) == 2  # same annotator: stays
    assert annotate_view.open_position(state, "other", "default", queue, {queue[0].decision_key}, {}) == 1
    item = next(it for it in queue if len(it.assigned_names) > 1)
    assigned = item.assigned_names
    assert annotate_view.open_focus(state, assigned, {assigned[0]: 1}) == 1
    annotate_view.move_focus(state, 1, 5, len(assigned))
    assert state["focus"] == len(assigned) - 1
    assert annotate_view.mark(state, "ann", item, 0, True) and state["focus"] == 1
    annotate_view.go(state, 1, -5, len(queue))
    assert (state["pos"], state["focus"]) == (0, None)
    others = [c["name"] for c in item.categories if c["name"] not in assigned]
    assert annotate_view.save_tags(state, "ann", item, others, [], []) is None
    assert annotate_view.save_tags(state, "ann", item, others, [others[0]], []) is True
    with AnnotationStore() as store:
        answers = store.answers("ann", item)
    assert answers[assigned[0]] == 1 and answers[others[0]] == 1


def test_a_running_typology_job_row_shows_stage_n_of_m(cache):
    """The job the page queues names its progress record; while it runs, the jobs table reads it
    (stage n of m, queries done of total), as the study's jobs table does."""
    from dataclasses import replace

    from core.jobs.progress import ProgressWriter

    job_id = view.submit_typology("dl19", "h2r", max_rounds=6)
    try:
        (job,) = view.TYPOLOGY.jobs()
        key = job.meta["progress"]
        assert job.id == job_id and job.command[job.command.index("--progress-key") + 1] == key
        writer = ProgressWriter(key, stages=1 + 8, interval=0)  # hard set, reasons, up to 6 rounds, assignment
        writer.stage("H2R hard set of the configuration")
        writer.stage("reasons for the H2R hard queries", 6, "query")
        writer.advance(3)
        (row,) = view.jobs_rows([replace(job, status="running")])
        assert row["message"].startswith("stage 2 of 9: reasons for the H2R hard queries · 3/6 queries")
        writer.finish(error="h2r: no reasons to induce a typology from")
        (row,) = view.jobs_rows([replace(job, status="running")])  # failed, the process not yet ended
        assert row["message"].endswith("failed: h2r: no reasons to induce a typology from")
    finally:
        jobs.cancel(job_id)


def test_the_small_model_warning_comes_from_the_runs_stored_provenance(cache, tmp_path):
    """``Provenance.small``, stored with a typology run, decides the pages' warning; a model's name never does."""
    from pipeline.llm import CachedClient, Provenance, ResponseCache, ScriptedBackend

    tiny = CachedClient(ScriptedBackend(typology_reply, provenance=Provenance("scripted", "tiny", small=True)),
                        ResponseCache(tmp_path / "llm-cache.sqlite"), retries=0)
    with TypologyStore() as store:
        run = run_typology(tiny, store, dataset="dl19", task="h2r", queries=[HardQuery("q1", "query one", "ctx")],
                           hard_set={"n_hard": 1}, config=InductionConfig(batch_size=1))
        note = view.small_model_note(view.run_provenances(store, [run["run_id"]]))
        assert note.startswith(f"Reasons produced by a {SMALL_MODEL}") and "not a finding" in note
        assert view.small_model_note(view.run_provenances(store, ["", "no-such-run"])) == ""
    assert view.small_model_note([Provenance("scripted", "SmolLM2-135M-lookalike").as_dict()]) == ""


def test_typology_page_flags_a_degenerate_assignment(cache, tmp_path):
    """Issue 33: a run that gave every category to every query was shown without a warning."""
    def everything(messages):
        if "Which of these categories" in messages[-1]["content"]:
            return json.dumps([{"category": c, "justification": "j"} for c in ("Ambiguity", "Numbers", "Jargon")])
        return typology_reply(messages)

    queries = [HardQuery(f"q{i}", f"query {i}", "ctx") for i in (1, 2, 3)]
    with TypologyStore() as store:
        result = run_typology(scripted_client(everything, tmp_path), store, dataset="dl19", task="h2r",
                              queries=queries, hard_set={}, config=InductionConfig(batch_size=3))
    assert [c["n_queries"] for c in result["categories"]] == [3, 3, 3]
    warnings = [w.value for w in app_page("failure-typology").warning]
    assert any("degenerate assignment: every one of the 3 categories was assigned to every one of the 3 readable "
               "queries" in w and "no verdict" in w for w in warnings), warnings
