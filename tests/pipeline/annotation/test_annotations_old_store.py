"""An annotation store written by the code before the versioned migrations (main at 20028e0,
``tests/fixtures/old_stores/``) opens with the current code: every answer, note and history row reads
back as before, an answer received again by id stays a duplicate, and new answers are stored."""
from __future__ import annotations

from pipeline.annotation.store import AnnotationStore
from tests.support.old_stores import copy_old_store, rows_as_before, versions


def test_an_old_annotation_store_reads_back_identically_and_takes_new_answers(tmp_path):
    path = copy_old_store("annotations.sqlite", tmp_path)
    with AnnotationStore(path) as store:
        rows_as_before(path, "annotations.sqlite")
        items = {i.qid: i for i in store.queue("ann")}
        assert sorted(items) == ["q1", "q2", "q3"]
        assert (items["q2"].status, items["q2"].generator) == ("unparseable", "gen")
        assert items["q3"].unknown == ("Lack of context",) and items["q3"].llm_answer == "unknown_category"
        assert store.answers("ann", items["q1"]) == {"Ambiguity": 1, "Numbers": 1}
        assert store.note("ann", items["q3"])["proposed"] == "Spelling"
        assert store.completed("ann") == {("run-1", "dl19", "h2r", "q1"), ("run-2", "dl19", "h2g", "q2")}
        assert len(store.export_rows()) == 4
        assert store.set_answer("ann", items["q1"], "Ambiguity", False, answer_id="a-1", given=2.0) == "duplicate"
        assert store.set_answer("ann", items["q3"], "Ambiguity", True, answer_id="a-2") == "stored"
        assert store.answers("ann", items["q3"]) == {"Ambiguity": 1, "Numbers": 0}
        assert len(store.export_rows()) == 6
    assert [(s, v) for s, v, _ in versions(path)] == [("annotations", 4)]
