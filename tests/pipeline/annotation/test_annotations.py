"""Annotation storage: samples, answers saved at once, history, reload, two writer processes, CSV."""
from __future__ import annotations

import multiprocessing as mp
from collections import Counter

import pytest

from pipeline.annotation.csv_format import CSV_COLUMNS, LEGACY_CSV_COLUMNS, read_csv
from pipeline.annotation.items import AnnotationError, Item
from pipeline.annotation.sampling import allocate, draw_sample
from pipeline.annotation.store import AnnotationStore
from pipeline.annotation.validation import report
from tests.pipeline.annotation.support import CATS, item


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
    assert store.completed("ann") == set()  # Ambiguity still unmarked: only the answered cell is exported (issue 33)
    assert [(r["category"], r["human_applicable"]) for r in store.export_rows()] == [("Numbers", 1)]
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


# ---------------------------------------------------------------------- decisions are keyed by typology run
def run_item(qid, run_id, assigned, model="small:model"):
    return Item("dl19", "h2r", qid, run_id=run_id, model=model, query=f"query {qid}", context="ctx", categories=CATS,
                assigned=[{"category": c, "justification": "why"} for c in assigned])


def test_a_newer_runs_sample_of_the_same_query_gets_its_own_decisions(tmp_path):
    """Issue 18, item 2: decisions keyed (annotator, dataset, task, qid, category) with INSERT OR IGNORE
    kept the old run's grid, so "correct" on the new run's reason was exported with llm_assigned = 0
    (a false negative) and the new item showed as complete before any answer."""
    store = AnnotationStore(tmp_path / "a.sqlite")
    old, new = run_item("q1", "run-old", ["Numbers"]), run_item("q1", "run-new", ["Ambiguity"], model="large:model")
    store.create_sample([old], name="first", size=1)
    store.set_answer("ann", old, "Numbers", True)
    store.create_sample([new], name="second", size=1)
    assert new.decision_key not in store.completed("ann")  # nothing answered on the new run yet
    store.set_answer("ann", new, "Ambiguity", True)
    rows = {(r["run_id"], r["category"]): r for r in store.export_rows()}
    assert rows[("run-new", "Ambiguity")]["llm_assigned"] == 1 and rows[("run-new", "Ambiguity")]["model"] == "large:model"
    assert rows[("run-new", "Numbers")]["llm_assigned"] == 0 and rows[("run-new", "Numbers")]["human_applicable"] == 0
    assert rows[("run-old", "Numbers")]["llm_assigned"] == 1 and rows[("run-old", "Numbers")]["model"] == "small:model"
    assert store.completed("ann") == {old.decision_key, new.decision_key}
    figures = report(store.export_rows())
    assert figures["by_model"]["large:model"]["llm_vs_annotator"]["ann"]["overall"]["tp"] == 1
    assert figures["by_model"]["large:model"]["llm_vs_annotator"]["ann"]["overall"]["fn"] == 0


def test_a_grid_stored_for_a_different_assignment_of_the_same_run_is_refused(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    store.set_answer("ann", run_item("q1", "run-1", ["Numbers"]), "Numbers", True)
    with pytest.raises(AnnotationError, match="judge a different assignment"):
        store.set_answer("ann", run_item("q1", "run-1", ["Jargon"]), "Jargon", True)  # the run was recomputed
    assert store.answers("ann", run_item("q1", "run-1", ["Numbers"])) == {"Numbers": 1, "Ambiguity": 0, "Jargon": 0}


def test_unreadable_items_write_unreadable_decisions(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    bad = Item("dl19", "h2r", "q9", "run-1", "m", "query", "ctx", CATS, [], status="unparseable", raw="no idea")
    store.create_sample([bad], size=1)
    assert store.queue("ann")[0].unreadable and store.queue("ann")[0].raw == "no idea"
    store.confirm("ann", bad)
    assert {r["llm_answer"] for r in store.export_rows()} == {"unreadable"}
    assert report(store.export_rows())["excluded"]["unreadable"] == {"queries": 1, "decisions": 3}


# The store's DDL before decisions were keyed by run (main at d166808): a migration is tested on a
# store created with exactly this.
OLD_SCHEMA = """
CREATE TABLE items (sample TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  run_id TEXT NOT NULL, model TEXT NOT NULL, query TEXT NOT NULL, context TEXT NOT NULL, categories TEXT NOT NULL,
  assigned TEXT NOT NULL, PRIMARY KEY (sample, dataset, task, qid));
CREATE TABLE samples (sample TEXT PRIMARY KEY, size INTEGER NOT NULL, seed INTEGER NOT NULL,
  per_annotator INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE queue (sample TEXT NOT NULL, annotator TEXT NOT NULL, position INTEGER NOT NULL,
  dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, PRIMARY KEY (sample, annotator, position));
CREATE TABLE decisions (annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  category TEXT NOT NULL, llm_assigned INTEGER NOT NULL CHECK (llm_assigned IN (0, 1)),
  human_applicable INTEGER CHECK (human_applicable IN (0, 1)), updated REAL NOT NULL, source TEXT NOT NULL,
  PRIMARY KEY (annotator, dataset, task, qid, category));
CREATE TABLE notes (annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '', proposed TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
  PRIMARY KEY (annotator, dataset, task, qid));
CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, source TEXT NOT NULL,
  annotator TEXT NOT NULL, dataset TEXT NOT NULL, task TEXT NOT NULL, qid TEXT NOT NULL, field TEXT NOT NULL, value TEXT);
"""


def _old_store(path):
    import json
    import sqlite3

    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)
    cats = json.dumps(CATS)
    conn.execute("INSERT INTO samples VALUES ('s1', 2, 0, 0, 1.0)")
    conn.execute("INSERT INTO samples VALUES ('s2', 1, 0, 0, 2.0)")
    for sample, qid, run, assigned in (("s1", "q1", "run-a", ["Numbers"]), ("s1", "q2", "run-a", []),
                                       ("s2", "q1", "run-b", ["Jargon"])):
        conn.execute("INSERT INTO items VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (sample, "dl19", "h2r", qid, run, f"model-{run}", f"query {qid}", "ctx", cats,
                      json.dumps([{"category": c, "justification": "why"} for c in assigned])))
    conn.executemany("INSERT INTO queue VALUES (?, '', ?, 'dl19', 'h2r', ?)", [("s1", 0, "q1"), ("s1", 1, "q2"),
                                                                                ("s2", 0, "q1")])
    grid = [("ann", "q1", "Numbers", 1, 1), ("ann", "q1", "Ambiguity", 0, 0), ("ann", "q1", "Jargon", 0, 1),
            ("ann", "q2", "Numbers", 0, 0), ("ann", "q2", "Ambiguity", 0, 0), ("ann", "q2", "Jargon", 0, 0),
            ("bob", "q7", "Numbers", 1, 0), ("bob", "q7", "Ambiguity", 0, 0)]  # q7: imported, no item
    conn.executemany("INSERT INTO decisions VALUES (?, 'dl19', 'h2r', ?, ?, ?, ?, 5.0, 'ui')", grid)
    conn.execute("INSERT INTO notes VALUES ('ann', 'dl19', 'h2r', 'q1', 'a note', 'Spelling', 6.0)")
    conn.execute("INSERT INTO notes VALUES ('bob', 'dl19', 'h2r', 'q2', 'only a note', '', 7.0)")
    conn.execute("INSERT INTO history (at, source, annotator, dataset, task, qid, field, value) "
                 "VALUES (5.0, 'ui', 'ann', 'dl19', 'h2r', 'q1', 'category:Numbers', '1')")
    conn.commit()
    conn.close()
    return len(grid)


def test_a_store_with_the_old_schema_is_migrated_without_losing_an_answer(tmp_path):
    path = tmp_path / "old.sqlite"
    n = _old_store(path)
    store = AnnotationStore(path)
    rows = store.conn.execute("SELECT * FROM decisions ORDER BY annotator, qid, category").fetchall()
    assert len(rows) == n
    by = {(r["annotator"], r["qid"], r["category"]): dict(r) for r in rows}
    # ann's q1 grid (Numbers assigned) judged run-a's assignment, not run-b's (Jargon)
    assert by[("ann", "q1", "Numbers")]["run_id"] == "run-a" and by[("ann", "q1", "Numbers")]["model"] == "model-run-a"
    assert by[("ann", "q1", "Jargon")]["human_applicable"] == 1 and by[("ann", "q1", "Jargon")]["llm_answer"] == "readable"
    # no assigned reason recorded: readable or not cannot be told any more
    assert {by[("ann", "q2", c)]["llm_answer"] for c in ("Numbers", "Ambiguity", "Jargon")} == {"unknown"}
    assert by[("bob", "q7", "Numbers")]["run_id"] == "" and by[("bob", "q7", "Numbers")]["human_applicable"] == 0
    notes = {(r["annotator"], r["qid"]): dict(r) for r in store.conn.execute("SELECT * FROM notes")}
    assert notes[("ann", "q1")]["run_id"] == "run-a" and notes[("ann", "q1")]["proposed"] == "Spelling"
    assert notes[("bob", "q2")]["run_id"] == "run-a" and notes[("bob", "q2")]["note"] == "only a note"
    assert store.history("ann")[0]["run_id"] == "run-a"
    items = {(i.qid, i.run_id): i for i in store.queue("ann", "s1") + store.queue("ann", "s2")}
    assert items[("q2", "run-a")].status == "unknown" and items[("q1", "run-a")].status == "ok"
    assert store.completed("ann") == {("run-a", "dl19", "h2r", "q1"), ("run-a", "dl19", "h2r", "q2")}
    assert store.answers("ann", items[("q1", "run-b")]) == {}  # run-b's item is still to be answered
    store.close()
    again = AnnotationStore(path)  # opening again changes nothing
    assert len(again.export_rows()) == n and again.conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 2


def test_a_legacy_csv_is_attributed_to_the_matching_run(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    store.create_sample([run_item("q1", "run-a", ["Numbers"])], name="s1", size=1)
    store.create_sample([run_item("q1", "run-b", ["Jargon"], model="other")], name="s2", size=1)
    legacy = ",".join(LEGACY_CSV_COLUMNS) + "\n" + "".join(
        f"bob,dl19,h2r,q1,{c},{int(c == 'Jargon')},1\n" for c in ("Numbers", "Ambiguity", "Jargon"))
    assert store.import_csv(tmp_path / "old.csv", legacy) == 3
    rows = store.export_rows()
    assert {(r["run_id"], r["model"], r["llm_answer"]) for r in rows} == {("run-b", "other", "readable")}
