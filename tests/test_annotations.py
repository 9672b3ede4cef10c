"""Annotation storage: samples, answers saved at once, history, reload, two writer processes, CSV."""
from __future__ import annotations

import multiprocessing as mp
from collections import Counter

import pytest

from pipeline.annotations import (CSV_COLUMNS, AnnotationError, AnnotationStore, Item, allocate, draw_sample,
                                  read_csv)
from pipeline.validation import report

CATS = [{"name": "Numbers", "description": "n"}, {"name": "Ambiguity", "description": "a"},
        {"name": "Jargon", "description": "j"}]


def item(qid, task="h2r", dataset="dl19", assigned=("Numbers",)):
    return Item(dataset, task, qid, run_id=f"run-{task}", model="scripted:scripted", query=f"query {qid}",
                context="<b>passage</b>", categories=CATS,
                assigned=[{"category": c, "justification": f"why {c}"} for c in assigned])


def pool(h2r=10, h2g=5, h2j=1):
    return ([item(f"r{i}", "h2r") for i in range(h2r)] + [item(f"g{i}", "h2g") for i in range(h2g)]
            + [item(f"j{i}", "h2j") for i in range(h2j)])


def test_allocate_is_proportional_with_a_floor_and_caps():
    assert allocate({"h2r": 10, "h2g": 5, "h2j": 1}, 8) == {"h2r": 5, "h2g": 2, "h2j": 1}
    assert allocate({"h2r": 10, "h2g": 10, "h2j": 10}, 50) == {"h2r": 10, "h2g": 10, "h2j": 10}  # all there is
    assert allocate({"h2r": 12, "h2g": 13, "h2j": 0}, 5) == {"h2r": 2, "h2g": 3, "h2j": 0}
    assert allocate({"h2r": 30, "h2g": 1, "h2j": 1}, 2) == {"h2r": 2, "h2g": 0, "h2j": 0}  # floor needs size >= strata
    for size in range(1, 17):
        assert sum(allocate({"a": 10, "b": 5, "c": 1}, size).values()) == size


def test_draw_sample_is_stratified_seeded_and_without_repeats():
    keys = [i.key for i in pool()]
    sample = draw_sample(keys, 8, seed=3)
    assert Counter(k[1] for k in sample) == {"h2r": 5, "h2g": 2, "h2j": 1} and len(set(sample)) == 8
    assert draw_sample(keys, 8, seed=3) == sample and draw_sample(keys, 8, seed=4) != sample


def test_shared_and_per_annotator_samples(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    store.create_sample(pool(), size=8, seed=1)
    assert [i.key for i in store.queue("ann")] == [i.key for i in store.queue("bob")]
    assert len(store.queue("ann")) == 8
    with pytest.raises(AnnotationError, match="exists already"):
        store.create_sample(pool(), size=8)
    store.create_sample(pool(), name="own", size=4, seed=1, per_annotator=True)
    ann, bob = store.queue("ann", "own"), store.queue("bob", "own")
    assert len(ann) == len(bob) == 4 and [i.key for i in ann] != [i.key for i in bob]
    assert [i.key for i in store.queue("ann", "own")] == [i.key for i in ann]  # drawn once, then kept
    assert store.queue("ann", "absent") == []
    with pytest.raises(AnnotationError, match="empty"):
        store.queue("  ")


def test_answers_grid_completion_history_and_reload(tmp_path):
    path = tmp_path / "a.sqlite"
    store = AnnotationStore(path)
    it = item("r1", assigned=("Numbers", "Ambiguity"))
    store.set_answer("ann", it, "Numbers", True)
    assert store.answers("ann", it) == {"Numbers": 1, "Ambiguity": None, "Jargon": 0}
    assert store.completed("ann") == set() and store.export_rows() == []  # Ambiguity still unmarked
    store.set_answer("ann", it, "Ambiguity", False)
    store.set_answer("ann", it, "Jargon", True)  # a reason the LLM missed
    store.set_answer("ann", it, "Ambiguity", True)  # changed her mind
    store.set_note("ann", it, note="hostile <b>note</b>", proposed="Spelling errors")
    store.close()

    reread = AnnotationStore(path)  # a reload / a server restart
    assert reread.answers("ann", it) == {"Numbers": 1, "Ambiguity": 1, "Jargon": 1}
    assert reread.completed("ann") == {it.decision_key}
    assert {k: v for k, v in reread.note("ann", it).items() if k != "updated"} == {"note": "hostile <b>note</b>",
                                                                                "proposed": "Spelling errors"}
    history = [(h["field"], h["value"]) for h in reread.history("ann")]
    assert history == [("category:Numbers", "1"), ("category:Ambiguity", "0"), ("category:Jargon", "1"),
                       ("category:Ambiguity", "1"), ("note", "hostile <b>note</b>"), ("proposed", "Spelling errors")]
    assert reread.export_rows() == [
        {"annotator": "ann", "dataset": "dl19", "task": "h2r", "qid": "r1", "category": c, "llm_assigned": l,
         "human_applicable": 1, "run_id": "run-h2r", "model": "scripted:scripted", "llm_answer": "readable"}
        for c, l in (("Ambiguity", 1), ("Jargon", 0), ("Numbers", 1))]
    with pytest.raises(AnnotationError, match="not a category"):
        reread.set_answer("ann", it, "Weather", True)
    with pytest.raises(AnnotationError, match="only an LLM-assigned reason"):
        reread.set_answer("ann", it, "Jargon", None)


def test_an_item_without_assigned_reasons_completes_when_confirmed(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    it = item("r2", assigned=())
    assert store.completed("ann") == set()
    store.confirm("ann", it)
    assert store.answers("ann", it) == {"Numbers": 0, "Ambiguity": 0, "Jargon": 0}
    assert store.completed("ann") == {it.decision_key} and len(store.export_rows()) == 3
    assert store.history("ann")[-1]["field"] == "confirmed"


def _writer(path, annotator, n):
    store = AnnotationStore(path)
    for i in range(n):
        it = item(f"r{i}", assigned=("Numbers",))
        store.set_answer(annotator, it, "Numbers", i % 2 == 0)
        store.set_answer(annotator, it, "Jargon", True)
    store.close()


def test_two_writer_processes_lose_nothing(tmp_path):
    path = tmp_path / "a.sqlite"
    AnnotationStore(path).close()
    n = 60
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, name, n)) for name in ("ann", "bob")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    store = AnnotationStore(path)
    rows = store.export_rows()
    assert len(rows) == 2 * n * len(CATS)
    assert Counter(r["annotator"] for r in rows) == {"ann": n * 3, "bob": n * 3}
    assert len(store.history()) == 2 * n * 2
    numbers = {(r["annotator"], r["qid"]): r["human_applicable"] for r in rows if r["category"] == "Numbers"}
    assert all(numbers[(a, f"r{i}")] == int(i % 2 == 0) for a in ("ann", "bob") for i in range(n))


def test_csv_round_trip_and_merge(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    a, b = item("r1", assigned=("Numbers",)), item("g1", task="h2g", assigned=())
    store.set_answer("ann", a, "Numbers", False)
    store.set_answer("ann", b, "Jargon", True)
    text = store.export_csv(tmp_path / "out.csv")
    assert text.splitlines()[0] == ",".join(CSV_COLUMNS)
    assert (tmp_path / "out.csv").read_text() == text and len(text.splitlines()) == 1 + 6

    other = AnnotationStore(tmp_path / "b.sqlite")
    other.set_answer("bob", a, "Numbers", True)
    assert other.import_csv(tmp_path / "out.csv") == 6  # annotation done elsewhere merges in
    assert {r["annotator"] for r in other.export_rows()} == {"ann", "bob"}
    assert [r for r in other.export_rows() if r["annotator"] == "ann"] == store.export_rows()
    assert other.history("ann")[0]["source"] == "import:out.csv"
    figures = report(other.export_rows())  # the report is computed from exactly the exported rows
    assert figures["n_rows"] == 9 and figures["kappa"]["ann | bob"]["overall"]["n_decisions"] == 3


@pytest.mark.parametrize("body, message", [
    ("annotator,dataset,task,qid,category,llm,human\n", ":1: the header must be exactly"),
    ("ann,dl19,h2r,q1,Numbers,1,1,r,m,readable\nann,dl19,h2x,q1,Numbers,1,1,r,m,readable\n", ":3: task must be one of"),
    ("ann,dl19,h2r,q1,Numbers,1,yes,r,m,readable\n", ":2: human_applicable must be 0 or 1"),
    ("ann,dl19,h2r,q1,Numbers,1\n", ":2: expected 10 fields, found 6"),
    ("ann,dl19,h2r,q1,Numbers,0,1,run-h2r,m,maybe\n", ":2: llm_answer must be one of readable, unreadable, unknown"),
    (",dl19,h2r,q1,Numbers,1,1,r,m,readable\n", ":2: empty annotator"),
    ("ann,dl19,h2r,q1,Numbers,1,1,r,m,readable\n\nann,dl19,h2r,q1,Numbers,1,0,r,m,readable\n", ":4: repeats the row of line 2"),
])
def test_csv_import_errors_name_the_line_and_store_nothing(tmp_path, body, message):
    path = tmp_path / "bad.csv"
    path.write_text(body if body.startswith("annotator,dataset,task,qid,category,llm,") else
                    ",".join(CSV_COLUMNS) + "\n" + body)
    store = AnnotationStore(tmp_path / "a.sqlite")
    with pytest.raises(AnnotationError, match=f"bad.csv{message}"):
        store.import_csv(path)
    assert store.export_rows() == [] and store.history() == []
    assert read_csv(path, ",".join(CSV_COLUMNS) + "\n") == []
