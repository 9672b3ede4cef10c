"""Typology induction and assignment with a scripted backend: the stop rule, stored rounds, resume."""
from __future__ import annotations

import json
import re

import pytest

from pipeline.llm.base import LLMError, ScriptedBackend
from pipeline.typology.categories import Category
from pipeline.typology.assignment import assign
from pipeline.typology.induction import (HardQuery, InductionConfig, induce, initial_messages, reason_messages,
                                         refine_messages)
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore
from tests.support.llm_helpers import scripted_client
from tests.support.progress_helpers import RecordingWriter

QUERIES = [HardQuery(f"q{i}", f"query number {i}", f"Top passages:\n[1] passage about {i}") for i in range(1, 7)]


def _qid_number(text):
    return re.search(r"Query: query number (\d+)", text).group(1)


def _typology(*names, desc="d"):
    return json.dumps([{"name": n, "description": f"{desc} {n}"} for n in names])


class Script:
    """Reason calls answer "reason for qN"; typology calls pop the scripted answers in order."""

    def __init__(self, typology_answers, assignment=None):
        self.typology_answers = list(typology_answers)
        self.assignment = assignment or (lambda text: '[{"category": "1", "justification": "because"}]')
        self.typology_prompts = []

    def __call__(self, messages):
        text = messages[-1]["content"]
        if "In one sentence" in text:
            return "Reason: reason for " + _qid_number(text)
        if "Which of these categories" in text:
            return self.assignment(text)
        self.typology_prompts.append(text)
        answer = self.typology_answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_prompts_carry_the_task_context():
    hq = QUERIES[0]
    text = reason_messages("h2g", hq)[-1]["content"]
    assert "hard to generate" in text and "query number 1" in text and "passage about 1" in text
    assert "at most 5" in initial_messages("h2r", ["r1", "r2"], 5)[-1]["content"]
    refine = refine_messages("h2j", [Category("A", "a")], ["r3"], 8)[-1]["content"]
    assert "1. A: a" in refine and "- r3" in refine and "merge" in refine and "generalise" in refine


def test_converges_when_the_set_is_unchanged_and_every_reason_was_seen(tmp_path):
    # 6 reasons, batch 2: every reason has been seen after round 3.
    script = Script([_typology("Ambiguity", "Numbers"),
                     _typology("ambiguity", "Numbers", desc="reworded"),  # unchanged, but q's unseen
                     _typology("Ambiguity", "Numbers", "Jargon"),  # adds a category
                     _typology("Ambiguity.", "**numbers**", "Jargon", desc="again")])  # unchanged + all seen
    client = scripted_client(script, tmp_path)
    result = induce(client, "h2r", QUERIES, InductionConfig(batch_size=2, max_rounds=10))
    assert result.stop_reason == "converged" and len(result.rounds) == 4
    assert [r.unchanged for r in result.rounds] == [False, True, False, True]
    assert result.rounds[2].added == ["Jargon"] and result.rounds[2].removed == []
    assert [c.name for c in result.categories] == ["Ambiguity", "numbers", "Jargon"]  # cleaned: markdown, full stop
    assert len(result.reasons) == 6 and result.reasons["q3"] == "reason for 3"
    # round 1 groups its batch; later rounds see the current typology and the next, unseen batch
    assert "Group these reasons" in script.typology_prompts[0]
    assert "1. Ambiguity: d Ambiguity" in script.typology_prompts[1]
    batches = [r.batch for r in result.rounds]
    assert sorted(q for b in batches[:3] for q in b) == [f"q{i}" for i in range(1, 7)]  # a permutation
    assert batches[3] == batches[0]  # then the order starts over


def test_stops_at_max_rounds_and_unparseable_rounds_never_count_as_unchanged(tmp_path):
    script = Script([_typology("A", "B"), "I do not know.", LLMError("server said 500"), _typology("A", "B", "C")])
    client = scripted_client(script, tmp_path)
    # batch 2: each round's prompt differs (with greedy decoding and the cache, an identical prompt
    # would get the identical unreadable answer again)
    result = induce(client, "h2j", QUERIES, InductionConfig(batch_size=2, max_rounds=4))
    assert result.stop_reason == "max_rounds"
    assert [r.status for r in result.rounds] == ["ok", "unparseable", "failed", "ok"]
    assert [r.unchanged for r in result.rounds] == [False, False, False, False]
    assert [c.name for c in result.rounds[1].categories] == ["A", "B"]  # kept from round 1
    assert "server said 500" in result.rounds[2].raw
    assert result.rounds[3].added == ["C"]


def test_converges_at_round_two_when_all_reasons_fit_one_batch(tmp_path):
    client = scripted_client(Script([_typology("A"), _typology("A")]), tmp_path)
    result = induce(client, "h2g", QUERIES, InductionConfig(batch_size=10, max_rounds=5))
    assert result.stop_reason == "converged" and len(result.rounds) == 2


def test_no_readable_typology_is_an_error(tmp_path):
    client = scripted_client(Script(["no", "still no"]), tmp_path)
    with pytest.raises(ValueError, match="no round produced a readable typology in 2 round"):
        induce(client, "h2r", QUERIES, InductionConfig(max_rounds=2))


def test_assignment_several_reasons_unparseable_and_failed(tmp_path):
    cats = [Category("Ambiguity", "a"), Category("Numbers", "n")]

    def answer(text):
        qid = _qid_number(text)
        return {"1": '[{"category": "Ambiguity", "justification": "two senses"}, '
                     '{"category": "2", "justification": "asks a price"}]',
                "2": "[]", "3": "no idea"}.get(qid) or (_ for _ in ()).throw(LLMError("timeout"))

    client = scripted_client(Script([], assignment=answer), tmp_path)
    out = {a.qid: a for a in assign(client, "h2r", QUERIES[:4], cats)}
    assert [(c.name, j) for c, j in out["q1"].reasons] == [("Ambiguity", "two senses"), ("Numbers", "asks a price")]
    assert (out["q2"].status, out["q2"].reasons) == ("ok", [])
    assert (out["q3"].status, out["q3"].raw) == ("unparseable", "no idea")
    assert out["q4"].status == "failed" and "timeout" in out["q4"].raw


def test_run_is_stored_round_by_round_and_a_finished_run_is_not_recomputed(tmp_path):
    script = Script([_typology("A", "B"), _typology("A", "B")])
    client = scripted_client(script, tmp_path)
    store = TypologyStore(tmp_path / "typology.sqlite")
    seen = []
    result = run_typology(client, store, dataset="dl19", task="h2r", queries=QUERIES,
                          hard_set={"rule": "test"}, config=InductionConfig(batch_size=6), on_round=seen.append)
    assert result["status"] == "done" and result["stop_reason"] == "converged" and result["n_rounds"] == 2
    assert [r.number for r in seen] == [1, 2]
    assert [c["name"] for c in result["categories"]] == ["A", "B"]
    assert result["categories"][0]["n_queries"] == 6  # the scripted assignment picks category 1 for all
    assert result["queries"][0]["assigned"] == [{"category": "A", "justification": "because"}]
    assert [r["round"] for r in result["rounds"]] == [1, 2] and result["rounds"][0]["added"] == ["A", "B"]
    reread = TypologyStore(tmp_path / "typology.sqlite")
    assert reread.result(result["run_id"]) == result
    assert reread.queries(result["run_id"])[2]["reason"] == "reason for 3"
    calls = len(client.backend.calls)
    again = run_typology(client, store, dataset="dl19", task="h2r", queries=QUERIES, hard_set={"rule": "test"},
                         config=InductionConfig(batch_size=6))
    assert again == result and len(client.backend.calls) == calls  # stored: no model call at all


def test_imported_typology_skips_induction_and_failed_run_is_recorded(tmp_path):
    store = TypologyStore(tmp_path / "typology.sqlite")
    client = scripted_client(Script([]), tmp_path)
    cats = [Category("Numerical data requirements", "n"), Category("Ambiguous subject references", "a")]
    result = run_typology(client, store, dataset="dl20", task="h2r", queries=QUERIES[:2], hard_set={},
                          imported=("study", cats))
    assert result["source"] == "imported" and result["rounds"] == [] and result["stop_reason"] is None
    assert result["typology"] == "study"
    assert [q["assigned"][0]["category"] for q in result["queries"]] == ["Numerical data requirements"] * 2
    with pytest.raises(ValueError, match="no round produced"):
        run_typology(scripted_client(Script(["x"]), tmp_path), store, dataset="dl20", task="h2g",
                     queries=QUERIES, hard_set={}, config=InductionConfig(max_rounds=1))
    (failed,) = store.list_runs(task="h2g")
    assert failed["status"] == "failed" and "no round produced" in failed["error"]
    assert len(store.rounds(failed["run_id"])) == 1  # the round it did is there to inspect


# ---------------------------------------------------------------------------- the job's progress record
def test_a_typology_run_writes_its_progress_record_stage_by_stage(tmp_path, monkeypatch):
    from core.jobs import progress as job_progress
    from pipeline.typology.runner import typology_stages

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    client = scripted_client(Script([_typology("A", "B"), _typology("A", "B")]), tmp_path)
    store = TypologyStore(tmp_path / "typology.sqlite")
    config = InductionConfig(batch_size=6, max_rounds=4)
    assert typology_stages(config, imported=False) == 6  # reasons, at most 4 rounds, assignment
    with RecordingWriter("typology-t1", typology_stages(config, False), interval=0) as tracker:
        run_typology(client, store, dataset="dl19", task="h2r", queries=QUERIES, hard_set={"rule": "test"},
                     config=config, progress=tracker)
    ended = [(r["stage_index"], r["stages"], r["stage"], r["done"], r["total"], r["unit"]) for r in tracker.ended]
    assert ended == [(1, 6, "reasons for the H2R hard queries", 6, 6, "query"),  # one reason call per query
                     (2, 6, "induction round 1 of at most 4", 0, 0, "item"),
                     # converged at round 2 (every reason seen, set unchanged): the 2 rounds it did not
                     # need are dropped as the round ends, so the assignment is "stage 4 of 4"
                     (3, 4, "induction round 2 of at most 4", 0, 0, "item")]
    record = job_progress.read_progress("typology-t1")
    assert (record["status"], record["stage_index"], record["stages"]) == ("completed", 4, 4)
    assert (record["stage"], record["done"], record["total"]) == ("assignment of reasons to the H2R hard queries",
                                                                  6, 6)
    assert job_progress.describe(record).startswith("stage 4 of 4: assignment of reasons to the H2R hard queries"
                                                    " · 6/6 queries")


def test_a_failed_typology_round_ends_the_record_with_its_error(tmp_path, monkeypatch):
    from core.jobs import progress as job_progress
    from pipeline.typology.runner import typology_stages

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    store = TypologyStore(tmp_path / "typology.sqlite")
    config = InductionConfig(max_rounds=1)
    with pytest.raises(ValueError, match="no round produced"):
        with job_progress.ProgressWriter("typology-t2", typology_stages(config, False), interval=0) as tracker:
            run_typology(scripted_client(Script(["not a typology"]), tmp_path), store, dataset="dl20", task="h2g",
                         queries=QUERIES, hard_set={}, config=config, progress=tracker)
    record = job_progress.read_progress("typology-t2")
    assert (record["status"], record["stage_index"], record["stages"]) == ("failed", 2, 3)
    assert record["stage"] == "induction round 1 of at most 1" and "no round produced" in record["error"]
    assert "failed: h2g: no round produced a readable typology" in job_progress.describe(record)


def test_an_imported_typology_has_one_stage_assignment(tmp_path, monkeypatch):
    from core.jobs import progress as job_progress
    from pipeline.typology.runner import typology_stages

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    store = TypologyStore(tmp_path / "typology.sqlite")
    cats = [Category("Numerical data requirements", "n")]
    with job_progress.ProgressWriter("typology-t3", typology_stages(InductionConfig(), True), interval=0) as tracker:
        run_typology(scripted_client(Script([]), tmp_path), store, dataset="dl20", task="h2r", queries=QUERIES[:2],
                     hard_set={}, imported=("study", cats), progress=tracker)
    record = job_progress.read_progress("typology-t3")
    assert (record["status"], record["stage_index"], record["stages"], record["done"], record["total"]) == (
        "completed", 1, 1, 2, 2)
