"""Issue 30, item 1: an assignment answer naming a category outside the typology (a model without a
grammar constraint: ``[{"category": "Lack of context", ...}]``) read as "ok, no reason assigned" and,
after annotation, as true negatives. It is its own state ("unknown_category"), the invented names
kept, shown, left out of every validation figure and counted apart; old stores still open."""
from __future__ import annotations

import json
import sqlite3

import pytest

from pipeline.annotation.items import Item
from pipeline.annotation.store import AnnotationStore
from pipeline.annotation.validation import report
from pipeline.typology.assignment import assign
from pipeline.typology.categories import Category
from pipeline.typology.induction import HardQuery, InductionConfig
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore
from tests.support.llm_helpers import scripted_client

CATS = [Category("Ambiguity", "vague"), Category("Numbers", "a figure"), Category("Jargon", "product terms")]
INVENTED = json.dumps([{"category": "Lack of context", "justification": "too short"}])
MIXED = json.dumps([{"category": "Numbers", "justification": "a price"},
                    {"category": "Lack of context", "justification": "too short"}])


def test_read_assignment_keeps_the_names_outside_the_typology():
    from pipeline.typology.parse import read_assignment

    read = read_assignment(INVENTED, CATS)
    assert (read.found, read.parsed, read.unknown) == ([], True, ["Lack of context"])
    read = read_assignment(MIXED, CATS)
    assert [c.name for c, _ in read.found] == ["Numbers"] and read.unknown == ["Lack of context"]
    assert read_assignment('["Lack of context", "lack of context: again", "2"]', CATS).unknown == ["Lack of context",
                                                                                                     "lack of context"]
    # an explicit empty list is "none applies"; known names and numbers invent nothing
    assert read_assignment("[]", CATS).unknown == [] and read_assignment("[]", CATS).parsed
    assert read_assignment('[{"category": "2"}, {"category": "jargon"}]', CATS).unknown == []
    # the prompt's own placeholder copied back is no answer at all, not "no reason applies"
    copied = read_assignment('[{"category": "category name", "justification": "short reason"}]', CATS)
    assert (copied.found, copied.parsed, copied.unknown) == ([], False, [])


def _queries(n=3):
    return [HardQuery(f"q{i}", f"query {i}", f"ctx {i}") for i in range(1, n + 1)]


def _answers(messages):
    text = messages[-1]["content"]
    return {"query 1": INVENTED, "query 2": MIXED}.get(next(q for q in ("query 1", "query 2", "query 3") if q in text),
                                                      "[]")


def test_an_answer_outside_the_typology_is_its_own_state_never_no_reason(tmp_path):
    out = {a.qid: a for a in assign(scripted_client(_answers, tmp_path), "h2r", _queries(), CATS)}
    assert (out["q1"].status, out["q1"].reasons, out["q1"].unknown) == ("unknown_category", [], ("Lack of context",))
    assert out["q2"].status == "unknown_category" and out["q2"].categories == ("Numbers",)
    assert (out["q3"].status, out["q3"].reasons) == ("ok", [])  # "[]": the model says none applies
    with TypologyStore(tmp_path / "t.sqlite") as store:
        result = run_typology(scripted_client(_answers, tmp_path), store, dataset="dl19", task="h2r",
                              queries=_queries(), hard_set={}, imported=("test", CATS))
    assert result["n_unknown_category"] == 2 and result["n_unparseable"] == 0
    assert result["unknown_categories"] == [{"name": "Lack of context", "n_queries": 2}]
    by_qid = {q["qid"]: q for q in result["queries"]}
    assert by_qid["q1"]["unknown_categories"] == ["Lack of context"] and by_qid["q1"]["status"] == "unknown_category"
    assert by_qid["q3"]["unknown_categories"] == []


# The typology store's assignments table before the invented names were kept (main at e24364a).
OLD_TYPOLOGY_ASSIGNMENTS = """
CREATE TABLE assignments (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, qid TEXT NOT NULL, status TEXT NOT NULL,
  reasons TEXT NOT NULL, raw TEXT NOT NULL, PRIMARY KEY (run_id, qid));
"""


def test_a_typology_store_from_before_opens_and_reads_its_runs(tmp_path):
    from pipeline.typology import store as typology_store

    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(typology_store.SCHEMA.migrations[0].step.split("CREATE TABLE IF NOT EXISTS assignments")[0]
                       + OLD_TYPOLOGY_ASSIGNMENTS)
    conn.execute("INSERT INTO runs (run_id, dataset, task, source, typology_label, hard_set, config, provenance, "
                 "status, categories, created) VALUES ('r1', 'dl19', 'h2r', 'imported', 'x', '{}', '{}', '{}', "
                 "'done', ?, 1.0)", (json.dumps([c.as_dict() for c in CATS]),))
    conn.execute("INSERT INTO queries (run_id, qid, position, query, context) VALUES ('r1', 'q1', 0, 'query 1', 'c')")
    conn.execute("INSERT INTO assignments VALUES ('r1', 'q1', 'ok', ?, 'raw')",
                 (json.dumps([{"category": "Numbers", "justification": "j"}]),))
    conn.commit()
    conn.close()
    with TypologyStore(path) as store:
        result = store.result("r1")
        assert result["n_unknown_category"] == 0 and result["queries"][0]["unknown_categories"] == []
        assert result["categories"][1] == {"name": "Numbers", "description": "a figure", "n_queries": 1}
        store.save_assignments("r1", assign(scripted_client(lambda m: INVENTED, tmp_path), "h2r", _queries(1), CATS))
        assert store.result("r1")["queries"][0]["unknown_categories"] == ["Lack of context"]
    with TypologyStore(path) as again:  # opening again changes nothing
        assert again.result("r1")["n_unknown_category"] == 1


ROWS = [{"name": c.name, "description": c.description} for c in CATS]


def _item(qid, status="unknown_category", assigned=(), unknown=("Lack of context",)):
    return Item("dl19", "h2r", qid, "run-1", "m", f"query {qid}", "ctx", ROWS,
                [{"category": c, "justification": "j"} for c in assigned], status=status, raw=INVENTED,
                unknown=tuple(unknown))


def test_annotated_unknown_category_answers_are_excluded_and_counted_never_true_negatives(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    items = [_item("q1"), _item("q2", assigned=["Numbers"]), _item("q3", "ok", ["Numbers"], ())]
    store.create_sample(items, size=3)
    queue = {i.qid: i for i in store.queue("ann")}
    assert queue["q1"].unknown == ("Lack of context",) and queue["q1"].llm_answer == "unknown_category"
    store.confirm("ann", queue["q1"])  # "none of the typology's categories applies"
    store.set_answer("ann", queue["q2"], "Numbers", True)
    store.set_answer("ann", queue["q3"], "Numbers", True)
    rows = store.export_rows()
    assert {r["qid"]: r["llm_answer"] for r in rows} == {"q1": "unknown_category", "q2": "unknown_category",
                                                         "q3": "readable"}
    out = report(rows)
    assert out["excluded"]["unknown_category"] == {"queries": 2, "decisions": 6}
    fig = out["by_model"]["m"]["llm_vs_annotator"]["ann"]["overall"]
    assert (fig["n_queries"], fig["n_decisions"], fig["tp"], fig["tn"]) == (1, 3, 1, 2)  # q3 alone
    # the CSV carries the state: an export imports again as it was
    again = AnnotationStore(tmp_path / "b.sqlite")
    assert again.import_csv(tmp_path / "x.csv", store.export_csv()) == 9
    assert report(again.export_rows())["excluded"] == out["excluded"]


def test_the_cli_report_names_the_excluded_state(tmp_path):
    from pipeline.cli.annotation import _report_lines

    rows = [{"annotator": "ann", "dataset": "dl19", "task": "h2r", "qid": "q1", "category": c, "llm_assigned": 0,
             "human_applicable": 0, "run_id": "r", "model": "m", "llm_answer": "unknown_category"} for c in "XY"]
    assert "excluded: 1 queries (2 decisions) with an assignment naming categories outside the typology" in \
        list(_report_lines(report(rows)))


# The annotation store's DDL just before the unknown_category answer (main at e24364a).
OLD_ANNOTATION_SCHEMA = """
CREATE TABLE items (
  sample TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, run_id TEXT NOT NULL,
  model TEXT NOT NULL, query TEXT NOT NULL, context TEXT NOT NULL, categories TEXT NOT NULL, assigned TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'ok', raw TEXT NOT NULL DEFAULT '', generator TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (sample, dataset, task, qid));
CREATE TABLE samples (
  sample TEXT PRIMARY KEY, size INTEGER NOT NULL, seed INTEGER NOT NULL, per_annotator INTEGER NOT NULL,
  created REAL NOT NULL);
CREATE TABLE queue (
  sample TEXT NOT NULL, annotator TEXT NOT NULL, position INTEGER NOT NULL,
  dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, PRIMARY KEY (sample, annotator, position));
CREATE TABLE decisions (
  annotator TEXT NOT NULL, run_id TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  category TEXT NOT NULL,
  llm_assigned INTEGER NOT NULL CHECK (llm_assigned IN (0, 1)),
  llm_answer TEXT NOT NULL DEFAULT 'readable' CHECK (llm_answer IN ('readable', 'unreadable', 'unknown')),
  human_applicable INTEGER CHECK (human_applicable IN (0, 1)),
  model TEXT NOT NULL DEFAULT '', updated REAL NOT NULL, source TEXT NOT NULL,
  PRIMARY KEY (annotator, run_id, dataset, task, qid, category));
CREATE TABLE notes (
  annotator TEXT NOT NULL, run_id TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '', proposed TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
  PRIMARY KEY (annotator, run_id, dataset, task, qid));
CREATE TABLE history (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, source TEXT NOT NULL, annotator TEXT NOT NULL,
  dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, field TEXT NOT NULL, value TEXT,
  run_id TEXT NOT NULL DEFAULT '');
"""


def test_an_annotation_store_from_before_is_migrated_keeping_every_answer(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(OLD_ANNOTATION_SCHEMA)
    conn.execute("INSERT INTO samples VALUES ('default', 1, 0, 0, 1.0)")
    conn.execute("INSERT INTO items VALUES ('default', 'dl19', 'h2r', 'q1', 'run-1', 'm', 'query q1', 'ctx', ?, ?, "
                 "'ok', 'raw', '')", (json.dumps(ROWS), json.dumps([{"category": "Numbers", "justification": "j"}])))
    conn.execute("INSERT INTO queue VALUES ('default', '', 0, 'dl19', 'h2r', 'q1')")
    conn.executemany("INSERT INTO decisions VALUES ('ann', 'run-1', 'dl19', 'h2r', 'q1', ?, ?, 'readable', ?, 'm', "
                     "5.0, 'ui')", [("Numbers", 1, 1), ("Ambiguity", 0, 0), ("Jargon", 0, 1)])
    conn.commit()
    conn.close()
    store = AnnotationStore(path)
    (item,) = store.queue("ann")
    assert (item.status, item.unknown) == ("ok", ())
    assert store.answers("ann", item) == {"Numbers": 1, "Ambiguity": 0, "Jargon": 1}
    assert len(store.export_rows()) == 3
    store.create_sample([_item("q2")], name="new", size=1)  # the new answer is accepted by the migrated table
    store.confirm("ann", store.queue("ann", "new")[0])
    assert report(store.export_rows())["excluded"]["unknown_category"] == {"queries": 1, "decisions": 3}
    store.close()
    again = AnnotationStore(path)
    assert len(again.export_rows()) == 6


@pytest.mark.slow
def test_typology_cli_counts_categories_outside_the_typology_apart(tmp_path):
    """``python -m pipeline typology ... --assigner ollama:MODEL@HOST`` against a server whose every
    assignment names "Lack of context" (in no typology): counted apart in the text and the JSON."""
    from tests.support.loopback_llm import LoopbackLLMServer
    from tests.pipeline.cli.support import pipeline_cli, typology_args, write_typology_collection

    write_typology_collection(tmp_path)
    cache = tmp_path / "cache"
    with LoopbackLLMServer() as server:
        args = typology_args(tmp_path, f"ollama:inventor@{server.url}")
        done = pipeline_cli(*args, env_cache=cache)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "assignments naming categories outside the typology: 2" in done.stdout
        assert "'Lack of context' (2)" in done.stdout
        assert all(line.lstrip().startswith("0 ") for line in done.stdout.splitlines()
                   if line.startswith("  ") and ":" in line and "outside" not in line)  # no category assigned
        as_json = pipeline_cli(*args, "--json", env_cache=cache)
        assert as_json.returncode == 0, as_json.stderr[-3000:]
    result = json.loads(as_json.stdout)
    assert (result["n_unknown_category"], result["n_unparseable"], result["n_failed"]) == (2, 0, 0)
    assert result["unknown_categories"] == [{"name": "Lack of context", "n_queries": 2}]
    assert {q["status"] for q in result["queries"]} == {"unknown_category"}
    assert all(q["unknown_categories"] == ["Lack of context"] and q["assigned"] == [] for q in result["queries"])


# ---------------------------------------------------------------------------- the pages
HOSTILE_NAME = "[Lack](javascript:alert(1)) of **context**"


def _page_answers(messages):
    text = messages[-1]["content"]
    if "query 1" in text:
        return json.dumps([{"category": HOSTILE_NAME, "justification": "too short"}])
    return MIXED if "query 2" in text else "[]"


@pytest.fixture
def outside_run(tmp_path, monkeypatch):
    import streamlit as st

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("IRDASH_CONFIG", str(tmp_path / "absent.toml"))
    st.cache_data.clear()
    st.cache_resource.clear()
    with TypologyStore() as store:
        return run_typology(scripted_client(_page_answers, tmp_path), store, dataset="dl19", task="h2r",
                            queries=_queries(), hard_set={}, imported=("test", CATS))


def test_the_typology_page_counts_and_shows_the_names_outside_the_typology_as_text(outside_run):
    from tests.pages.support import app_page, page_texts

    at = app_page("failure-typology")
    assert {m.label: m.value for m in at.metric}["Outside the typology"] == "2"
    assert f"Categories outside the typology the model named: Lack of context (1); {HOSTILE_NAME} (1)" in page_texts(at)
    queries = at.dataframe[1].value.set_index("qid")
    assert queries.loc["q1", "outside the typology"] == HOSTILE_NAME and queries.loc["q1", "reasons"] == ""
    assert queries.loc["q1", "assignment"] == "unknown_category"
    assert "The model assigned no reason to this query." not in page_texts(at)  # q1 is the selected query
    assert any(HOSTILE_NAME in t.value for t in at.text)  # as plain text (st.text), never Markdown
    assert any("outside the typology" in w.value for w in at.warning)
    assert not any("javascript" in w.value for kind in ("warning", "caption", "markdown") for w in getattr(at, kind))


def test_the_annotate_page_shows_the_names_outside_the_typology_as_text(outside_run):
    from streamlit.testing.v1 import AppTest

    from pipeline.views import failure_typology as view
    from tests.pages.support import APP, TIMEOUT, page_texts

    with TypologyStore() as store:
        items = view.sample_items(store)
    assert {i.qid: i.unknown for i in items}["q1"] == (HOSTILE_NAME,)
    with AnnotationStore() as store:
        store.create_sample(items, size=3, seed=0)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"annotator": "ann", "dataset": "dl19", "task": "h2r", "qid": "q1"})
    at.run()
    at.switch_page("pages/annotate-reasons.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(HOSTILE_NAME in t.value for t in at.text)
    assert any("names categories outside the typology" in w.value for w in at.warning)
    assert "The model assigned no reason to this query" not in page_texts(at)
