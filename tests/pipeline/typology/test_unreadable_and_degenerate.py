"""Issue 33: an assignment answer whose JSON items name nothing (``[7]``, ``["7"]``, ``[{}]``,
``[{"category": 7}]``, ``[{"category": ""}]``) read as "parsed, no reason applies", so the query's
every category became a true negative; it is unparseable, excluded and counted (also when an old
store holds it as "ok"). A run that gave every category to every query, or none to any, is flagged
as degenerate by the store's result, the CLI's text and the page."""
from __future__ import annotations

import json

import pytest

from pipeline.cli.typology import assignment_lines
from pipeline.typology.assignment import assign
from pipeline.typology.categories import Assignment, Category
from pipeline.typology.degenerate import degenerate_reason
from pipeline.typology.induction import HardQuery
from pipeline.typology.parse import read_assignment
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore
from pipeline.views.failure_typology import degenerate_warning
from tests.support.llm_helpers import scripted_client

CATS = [Category("Ambiguity", "vague"), Category("Numbers", "a figure"), Category("Jargon", "product terms")]
UNREADABLE = ['[{"category": 7}]', "[7]", '["7"]', "[{}]", '[{"category": ""}]',
              "{}", "[null]", "[[1]]", '[{"justification": "no name given"}]',
              '[{"category": "Numbers", "justification": "a price"}, {"category": 9}]']


@pytest.mark.parametrize("answer", UNREADABLE)
def test_json_items_that_name_nothing_make_the_answer_unparseable(answer):
    read = read_assignment(answer, CATS)
    assert not read.parsed and read.unreadable >= 1


def test_readable_answers_stay_readable():
    assert read_assignment("[]", CATS).parsed  # the model's explicit "none applies"
    assert [c.name for c, _ in read_assignment('[2, {"category": "jargon"}]', CATS).found] == ["Numbers", "Jargon"]
    # an echoed passage marker beside list lines: the lines are the answer
    read = read_assignment("[12] a passage about cars\n1. Jargon: brand names\n", CATS)
    assert read.parsed and [c.name for c, _ in read.found] == ["Jargon"] and read.unreadable == 0
    # the prompt's example copied beside a real reason is skipped, not unreadable
    read = read_assignment('[{"category": "Numbers", "justification": "x"}, {"category": "category name"}]', CATS)
    assert read.parsed and [c.name for c, _ in read.found] == ["Numbers"]


def _queries(n):
    return [HardQuery(f"q{i}", f"query {i}", "") for i in range(1, n + 1)]


def _by_query(answers):
    def respond(messages):
        text = messages[-1]["content"]
        return next(a for q, a in answers.items() if f"Query: query {q}\n" in text)
    return respond


def test_unreadable_answers_are_counted_apart_and_never_read_as_no_reason(tmp_path):
    answers = {i + 1: a for i, a in enumerate(UNREADABLE[:5])}
    answers[6] = json.dumps([{"category": "Numbers", "justification": "a price"}])
    answers[7] = "[]"
    out = {a.qid: a for a in assign(scripted_client(_by_query(answers), tmp_path), "h2r", _queries(7), CATS)}
    assert [out[f"q{i}"].status for i in range(1, 8)] == ["unparseable"] * 5 + ["ok", "ok"]
    with TypologyStore(tmp_path / "t.sqlite") as store:
        result = run_typology(scripted_client(_by_query(answers), tmp_path), store, dataset="dl19", task="h2r",
                              queries=_queries(7), hard_set={}, imported=("test", CATS))
    assert result["n_unparseable"] == 5 and result["degenerate"] == ""
    assert "unparseable assignments: 5" in "\n".join(assignment_lines(result))


def test_an_old_store_holding_an_unreadable_answer_as_ok_reads_it_unparseable(tmp_path):
    with TypologyStore(tmp_path / "t.sqlite") as store:
        store.start_run("r", dataset="dl19", task="h2r", source="imported", typology_label="t", hard_set={},
                        config={}, provenance={}, queries=_queries(2))
        store.save_typology("r", CATS, None)
        # what the old reader stored for "[7]": status ok, no reason
        store.save_assignments("r", [Assignment("q1", "h2r", [], "ok", "", "[7]"),
                                     Assignment("q2", "h2r", [(CATS[1], "")], "ok", "", '["Numbers"]')])
        statuses = {q["qid"]: q["status"] for q in store.queries("r")}
        assert statuses == {"q1": "unparseable", "q2": "ok"} and store.result("r")["n_unparseable"] == 1


def test_degenerate_reason():
    names = [c.name for c in CATS]
    assert "every one of the 3 categories" in degenerate_reason([names] * 6, names)
    assert "6 readable queries" in degenerate_reason([names] * 6, names)
    assert "no category was assigned to any of the 4" in degenerate_reason([[]] * 4, names)
    assert degenerate_reason([names, ["Numbers"]], names) == ""
    assert degenerate_reason([], names) == ""  # nothing readable: counted as unreadable, not degenerate


@pytest.mark.parametrize("answer, words", [
    (json.dumps([{"category": c.name, "justification": "j"} for c in CATS]), "every one of the 3 categories"),
    ("[]", "no category was assigned to any of the 6")])
def test_a_degenerate_run_is_flagged_by_the_store_the_cli_and_the_page(tmp_path, answer, words):
    with TypologyStore(tmp_path / "t.sqlite") as store:
        result = run_typology(scripted_client(lambda messages: answer, tmp_path), store, dataset="dl19", task="h2r",
                              queries=_queries(6), hard_set={}, imported=("test", CATS))
    assert words in result["degenerate"]
    assert any(line.startswith("warning: degenerate assignment") and "no verdict" in line
               for line in assignment_lines(result))
    assert words in degenerate_warning(result) and "no verdict" in degenerate_warning(result)


def test_an_annotation_sample_from_before_reads_its_unreadable_answer_as_unreadable(tmp_path):
    from pipeline.annotation.items import Item
    from pipeline.annotation.store import AnnotationStore
    from pipeline.annotation.validation import report

    cats = [c.as_dict() for c in CATS]
    old = Item("dl19", "h2r", "q1", "run", "ollama:m", "query 1", "", cats, [], status="ok", raw="[7]")
    readable = Item("dl19", "h2r", "q2", "run", "ollama:m", "query 2", "", cats, [], status="ok", raw="[]")
    with AnnotationStore(tmp_path / "a.sqlite") as store:
        store.create_sample([old, readable], size=2)
        store.confirm("ann", old)  # the grid as the old reading wrote it: llm_answer readable
        store.confirm("ann", readable)
        assert {i.qid: i.status for i in store.queue("ann")} == {"q1": "unparseable", "q2": "ok"}
        rows = store.export_rows()
    assert {r["qid"]: r["llm_answer"] for r in rows} == {"q1": "unreadable", "q2": "readable"}
    figures = report(rows)
    assert figures["excluded"]["unreadable"]["queries"] == 1
    assert figures["by_model"]["ollama:m"]["llm_vs_union"]["overall"]["n_queries"] == 1
