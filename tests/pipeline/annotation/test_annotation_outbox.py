"""Answers the Annotate page's browser kept while the server was unreachable (issue 30 item 10): each
carries an id and the time it was given; the store applies an id once, never over an answer given
later, and two processes delivering the same answers at once store each one once. The browser side
(pages/answer_outbox.js) is tested in tests/browser/test_browser_annotate_outage.py."""
from __future__ import annotations

import multiprocessing as mp
import sqlite3
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

from pipeline.annotation.store import AnnotationStore
from pipeline.views import annotate_reasons
from tests.pipeline.annotation.support import item


def ui_answers(store: AnnotationStore, annotator: str = "ann") -> list[dict]:
    return [h for h in store.history(annotator) if h["field"].startswith("category:")]


def entry(it, category, value, given, answer_id, annotator="ann", sample="default"):
    return {"id": answer_id, "annotator": annotator, "sample": sample, "run_id": it.run_id, "dataset": it.dataset,
            "task": it.task, "qid": it.qid, "title": it.qid, "category": category, "value": value, "given": given}


def test_an_answer_id_is_applied_once(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    it = item("q1")
    given = time.time() - 30
    assert store.set_answer("ann", it, "Numbers", True, answer_id="a1", given=given) == "stored"
    assert store.set_answer("ann", it, "Numbers", True, answer_id="a1", given=given) == "duplicate"
    assert store.set_answer("ann", it, "Numbers", False, answer_id="a1", given=given + 1) == "duplicate"
    assert store.answers("ann", it)["Numbers"] == 1 and len(ui_answers(store)) == 1
    assert store.saved("ann", it)["Numbers"]["updated"] == pytest.approx(given)  # dated when it was given
    assert store.confirm("ann", item("q2", assigned=()), answer_id="c1") == "stored"
    assert store.confirm("ann", item("q2", assigned=()), answer_id="c1") == "duplicate"
    assert [h["field"] for h in store.history("ann")].count("confirmed") == 1
    later = time.time() + 3600  # a browser clock ahead: never dated after it arrived
    store.set_answer("ann", item("q3"), "Numbers", True, answer_id="a2", given=later)
    assert store.saved("ann", item("q3"))["Numbers"]["updated"] <= time.time()


def test_an_answer_given_earlier_never_replaces_a_later_one(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    it = item("q1")
    outage = time.time() - 60  # given while the server was down ...
    store.set_answer("ann", it, "Numbers", True)  # ... then the same reason answered in another tab
    assert store.set_answer("ann", it, "Numbers", False, answer_id="late", given=outage) == "superseded"
    assert store.answers("ann", it)["Numbers"] == 1 and len(ui_answers(store)) == 1
    assert store.set_answer("ann", it, "Numbers", False, answer_id="late", given=outage) == "duplicate"
    # the grid's first write and an answer to another reason are no answer to this one
    other = item("q2", assigned=("Numbers", "Jargon"))
    store.set_answer("ann", other, "Jargon", True)
    assert store.set_answer("ann", other, "Numbers", False, answer_id="n2", given=outage) == "stored"
    assert store.answers("ann", other) == {"Numbers": 0, "Jargon": 1, "Ambiguity": 0}
    # an import after the answer was given is a later answer
    text = store.export_csv().replace(",q2,Numbers,1,0,", ",q2,Numbers,1,1,")
    store.import_csv("fix.csv", text)
    assert store.set_answer("ann", other, "Numbers", False, answer_id="n3", given=time.time() - 5) == "superseded"
    assert store.answers("ann", other)["Numbers"] == 1


def _deliver(path, barrier, ids, value):
    store = AnnotationStore(path)
    it = item("q1", assigned=("Numbers", "Jargon"))
    barrier.wait(30)  # both processes deliver at the same moment, by construction
    outcomes = [store.set_answer("ann", it, category, value, answer_id=answer_id, given=given)
                for answer_id, category, given in ids]
    store.close()
    assert outcomes.count("stored") + outcomes.count("duplicate") + outcomes.count("superseded") == len(ids)


def test_two_processes_delivering_the_same_answers_store_each_once(tmp_path):
    """Two tabs of one browser share its kept answers, and both send them when the server is back."""
    path = tmp_path / "a.sqlite"
    AnnotationStore(path).close()
    t0 = time.time() - 100
    ids = [(f"id{i}", ("Numbers", "Jargon")[i % 2], t0 + i) for i in range(40)]
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager, ProcessPoolExecutor(2, mp_context=ctx) as pool:
        barrier = manager.Barrier(2)
        for done in [pool.submit(_deliver, path, barrier, ids, True) for _ in range(2)]:
            done.result(timeout=120)  # a writer's exception is raised here
    store = AnnotationStore(path)
    received = store.conn.execute("SELECT answer_id, outcome FROM received_answers").fetchall()
    assert sorted(r["answer_id"] for r in received) == sorted(i for i, _, _ in ids)  # each id once
    # each process goes in the order given, so none finds a later answer first: all 40 stored, once
    assert {r["outcome"] for r in received} == {"stored"} and len(ui_answers(store)) == len(ids)
    assert store.answers("ann", item("q1", assigned=("Numbers", "Jargon"))) == {"Numbers": 1, "Jargon": 1,
                                                                                 "Ambiguity": 0}


def test_a_store_without_the_received_table_opens_and_keeps_its_answers(tmp_path):
    path = tmp_path / "a.sqlite"
    store = AnnotationStore(path)
    store.set_answer("ann", item("q1"), "Numbers", True)
    store.conn.execute("DROP TABLE received_answers")
    store.conn.execute("DROP TABLE schema_migrations")  # the code before this table kept no versions
    store.close()
    store = AnnotationStore(path)
    assert store.answers("ann", item("q1"))["Numbers"] == 1
    assert store.set_answer("ann", item("q1"), "Numbers", False, answer_id="x", given=time.time()) == "stored"


@pytest.fixture
def sampled(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    items = [item("q1", assigned=("Numbers", "Jargon")), item("q2", assigned=())]
    with annotate_reasons.open_annotation_store() as store:
        store.create_sample(items, size=2, seed=0)
    return {it.qid: it for it in items}


def test_receive_outbox_stores_in_given_order_and_acknowledges_each(sampled):
    it = sampled["q1"]
    t0 = time.time() - 50
    state = {"focus": 0}
    outbox = {"answers": [entry(it, "Numbers", False, t0 + 2, "b"), entry(it, "Numbers", True, t0 + 1, "a"),
                          entry(sampled["q2"], None, False, t0 + 3, "c")], "attempt": 1}
    assert annotate_reasons.receive_outbox(state, outbox, "ann", it)
    assert state[annotate_reasons.OUTBOX_ACKS] == {"a": "stored", "b": "stored", "c": "stored"}
    with annotate_reasons.open_annotation_store() as store:
        assert store.answers("ann", it)["Numbers"] == 0  # the later one (b) is the answer
        assert ("run-h2r", "dl19", "h2r", "q2") in store.completed("ann")
    assert state["focus"] == 1  # as a click: the next reason not yet marked is highlighted
    assert not annotate_reasons.receive_outbox(state, outbox, "ann", it)  # sent again: nothing new, no redraw
    assert set(state[annotate_reasons.OUTBOX_ACKS]) == {"a", "b", "c"}
    data = annotate_reasons.outbox_data(state, "ann", "default", it, {"Numbers": 0}, 1)
    assert data["acks"] == state[annotate_reasons.OUTBOX_ACKS] and data["assigned"] == ["Numbers", "Jargon"]
    assert annotate_reasons.save_problems(state) == []


def test_receive_outbox_reports_what_it_cannot_store(sampled, monkeypatch):
    it = sampled["q1"]
    state = {"focus": None}
    bad = [{"id": "x1", "annotator": "ann"}, entry(it, "Weather", True, time.time(), "x2"),
           entry(it, "Numbers", True, time.time(), "x3", sample="gone"), "not an entry", {"no": "id"}]
    assert annotate_reasons.receive_outbox(state, {"answers": bad}, "ann", it)
    assert state[annotate_reasons.OUTBOX_ACKS] == {"x1": "refused", "x2": "refused", "x3": "refused"}  # dropped by the browser
    messages = annotate_reasons.save_problems(state)
    assert len(messages) == 3 and all(m.startswith("Not saved: ") for m in messages)
    assert "'Weather' is not a category" in messages[1] and "not in sample 'gone'" in messages[2]
    assert annotate_reasons.receive_outbox(state, None, "ann", it) is True and state[annotate_reasons.OUTBOX_ACKS] == {}

    def unreachable():
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(annotate_reasons, "open_annotation_store", unreachable)
    state = {}
    assert not annotate_reasons.receive_outbox(state, {"answers": [entry(it, "Numbers", True, time.time(), "y")]}, "ann", it)
    assert state[annotate_reasons.OUTBOX_ACKS] == {}  # no outcome: the browser keeps it and sends it again
    assert "kept in this browser" in annotate_reasons.save_problems(state)[0]


def test_a_superseded_answer_is_said_so(sampled):
    it = sampled["q1"]
    given = time.time() - 60
    with annotate_reasons.open_annotation_store() as store:
        store.set_answer("ann", it, "Numbers", True)
    state = {}
    annotate_reasons.receive_outbox(state, {"answers": [entry(it, "Numbers", False, given, "s")]}, "ann", it)
    assert state[annotate_reasons.OUTBOX_ACKS] == {"s": "superseded"}
    (message,) = annotate_reasons.save_problems(state)
    assert message.startswith("Not applied: Numbers → incorrect") and "the later one is kept" in message
