"""Issue 33: saved answers were invisible until every assigned reason of a query was marked: 10 answers
saved, the export said "exported 0 rows", the report "0 decisions", the findings "no annotations". A
partial query now counts by its answered cells (marked reasons, tagged or untagged categories), never
by its untouched 0s, and the export, the report and the findings read the same rows."""
from __future__ import annotations

import json

from pipeline.annotation.store import AnnotationStore
from pipeline.annotation.validation import report
from pipeline.findings.agreement import typology_agreement
from pipeline.findings.finding import UNMEASURABLE
from pipeline.views.annotate_reasons import answered_text
from tests.pipeline.annotation.support import item


def _ten_partial_answers(store):
    """10 queries, each with two assigned reasons; the annotator marks the first one of each."""
    items = [item(f"r{i}", assigned=("Numbers", "Ambiguity")) for i in range(10)]
    for i, it in enumerate(items):
        store.set_answer("ann", it, "Numbers", i < 8)
    return items


def test_ten_saved_answers_are_exported_reported_and_found(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    _ten_partial_answers(store)
    rows = store.export_rows()
    assert len(rows) == 10 and {(r["category"], r["llm_assigned"]) for r in rows} == {("Numbers", 1)}
    assert sum(r["human_applicable"] for r in rows) == 8
    assert store.answered_queries() == {"complete": 0, "partial": 10, "rows": 10}
    figures = report(rows)["by_model"]["scripted:scripted"]["llm_vs_union"]["overall"]
    assert (figures["n_decisions"], figures["tp"], figures["fp"], figures["tn"]) == (10, 8, 2, 0)
    found = typology_agreement(rows, "a.sqlite")
    assert found.verdict != UNMEASURABLE and all("no annotations" not in p.reason for p in found.parts)
    assert "0 complete queries, 10 partial" in answered_text(store.answered_queries())


def test_a_partial_query_counts_its_answered_cells_never_its_untouched_zeros(tmp_path):
    store = AnnotationStore(tmp_path / "a.sqlite")
    it = item("r1", assigned=("Numbers", "Ambiguity"))
    store.set_answer("ann", it, "Numbers", True)
    store.set_answer("ann", it, "Jargon", True)  # a reason the LLM missed, tagged
    assert {r["category"]: r["human_applicable"] for r in store.export_rows()} == {"Numbers": 1, "Jargon": 1}
    store.set_answer("ann", it, "Jargon", False)  # untagged again: an answer "does not apply"
    assert {r["category"]: r["human_applicable"] for r in store.export_rows()} == {"Numbers": 1, "Jargon": 0}
    done = item("r2", assigned=("Numbers",))
    store.set_answer("ann", done, "Numbers", False)  # complete: its untagged categories are answers
    assert len([r for r in store.export_rows() if r["qid"] == "r2"]) == 3
    assert store.answered_queries() == {"complete": 1, "partial": 1, "rows": 5}


def test_the_cli_export_and_report_say_the_same(tmp_path, capsys, monkeypatch):
    from pipeline.cli import main

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(cache))
    with AnnotationStore(cache / "annotations.sqlite") as store:
        _ten_partial_answers(store)
    out = tmp_path / "out.csv"
    assert main(["annotations", "--export", str(out), "--report", "--json"]) == 0
    done = capsys.readouterr()
    assert f"exported 10 rows to {out} (0 complete queries, 10 partial queries" in done.err
    assert len(out.read_text().splitlines()) == 11
    figures = json.loads(done.out)
    assert figures["n_rows"] == 10 and figures["answered_queries"] == {"complete": 0, "partial": 10, "rows": 10}
    assert main(["annotations", "--report"]) == 0
    assert "10 decisions from 1 annotator(s) (0 complete queries, 10 partial" in capsys.readouterr().out
