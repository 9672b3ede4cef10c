"""Difficulty-aware generation and the pairwise judge: prompts, verdict parsing, both-order outcomes,
statistics against hand-computed values, a scripted end-to-end run, stored results and the CLI."""
from __future__ import annotations

import json
import re

import pytest

from pipeline.prompting import difficulty, pairwise, preference
from pipeline.prompting.difficulty import DifficultyInputError
from pipeline.generation.answers import zero_shot_messages
from pipeline.llm.base import LLMError, Provenance
from pipeline.typology.assignment import assign_reasons
from pipeline.typology.categories import TASKS, Category
from pipeline.typology.parse import parse_numbers
from tests.support.preference_helpers import (NUMERICAL, PRODUCT, TEMPLATES, TYPOLOGY, assignments, client, data,
                                      dl19_folder, generate, judge, responses)


# ---------------------------------------------------------------------------- prompts and inputs
def test_typology_and_templates_ship_the_study_categories():
    assert len(TYPOLOGY.categories) == 10
    assert [len(TYPOLOGY.for_task(t)) for t in TASKS] == [3, 3, 4]
    numerical = TYPOLOGY.find("numerical DATA requirements")
    assert TEMPLATES.sentence(numerical) == "This query requires numerical data."
    assert all(TEMPLATES.sentence(c).startswith("This query") for c in TYPOLOGY.categories)
    custom = Category("Rare Words", "The query uses rare words.")
    assert TEMPLATES.sentence(custom) == "This query is difficult because of rare words: The query uses rare words."
    two = [numerical, TYPOLOGY.find(PRODUCT)]
    assert TEMPLATES.difficulty_text(two) == "This query requires numerical data."
    assert TEMPLATES.difficulty_text(two, "all") == ("This query requires numerical data. "
                                                     "This query uses specific product terminology.")


def test_template_and_assignment_files_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps({"default": "Hard: {query}", "sentences": {}}))
    with pytest.raises(DifficultyInputError, match=r"t\.json: 'default' may only use .* not query"):
        difficulty.load_templates(bad)
    jl = tmp_path / "reasons.jsonl"
    jl.write_text('{"qid": "q1", "task": "h2r", "categories": ["numerical data requirements"]}\n\n'
                  '{"qid": "q2", "task": "h2r", "categories": ["Made-up reason"]}\n')
    with pytest.raises(DifficultyInputError, match=r"reasons\.jsonl:3: category 'Made-up reason' is not in"):
        difficulty.load_assignments(jl, TYPOLOGY)
    jl.write_text('{"qid": "q1", "task": "h2x", "categories": ["x"]}\n')
    with pytest.raises(DifficultyInputError, match=r"reasons\.jsonl:1: task 'h2x'"):
        difficulty.load_assignments(jl, TYPOLOGY)
    jl.write_text('{"qid": "q1", "task": "h2r", "categories": [')
    with pytest.raises(DifficultyInputError, match=r"reasons\.jsonl:1: invalid JSON"):
        difficulty.load_assignments(jl, TYPOLOGY)
    js = tmp_path / "reasons.json"
    js.write_text(json.dumps([{"qid": 1, "task": "h2g", "categories": ["risk of misinformation", "need for recent "
                                                                        "information"]},
                              {"qid": "2", "task": "h2j", "categories": "Specific or niche topics"}]))
    loaded = difficulty.load_assignments(js, TYPOLOGY)
    assert [(a.qid, a.task, a.categories) for a in loaded] == [
        ("1", "h2g", ("Risk of misinformation", "Need for recent information")),
        ("2", "h2j", ("Specific or niche topics",))]
    js.write_text(json.dumps([{"qid": 1, "task": "h2g", "categories": ["risk of misinformation"]}] * 2))
    with pytest.raises(DifficultyInputError, match="item 1: .* appears twice"):
        difficulty.load_assignments(js, TYPOLOGY)


def test_difficulty_prompt_changes_only_one_line():
    query = "what is <b>a</b> prism"
    base = zero_shot_messages(query)
    aware = difficulty.with_difficulty(base, "This query requires numerical data.", query)
    assert aware[:-1] == base[:-1]
    assert base == zero_shot_messages(query)  # the baseline is not modified
    # the sentence joins the question, before the prompt's closing "Answer:" cue
    assert f"Question: {query}\nThis query requires numerical data.\nAnswer:" in aware[-1]["content"]
    diff = difficulty.prompt_diff(base, aware).splitlines()
    assert [line for line in diff if line[:2] != "  "] == ["+ This query requires numerical data."]
    assert diff.index("+ This query requires numerical data.") == diff.index(f"  Question: {query}") + 1
    # without the query (or when the prompt does not hold it) the sentence ends the last user message
    appended = difficulty.with_difficulty(base, "Hard.", "not in the prompt")
    assert appended[-1]["content"] == base[-1]["content"] + "\nHard."


# ---------------------------------------------------------------------------- verdicts and outcomes
@pytest.mark.parametrize("reply, expected", [
    ("A", "A"), ("B.", "B"), ("**B**", "B"), ("[[A]]", "A"), ("Response B.", "B"), ("(B) because it cites", "B"),
    ("The answer is B", "B"), ("Final answer: A", "A"), ("I prefer Response A.", "A"),
    ("Response B is better than Response A", "B"), ("A better answer would be B", "B"),
    ("Both are equally good.", "tie"), ("tie", "tie"),
    # unparseable: never guessed
    ("", None), ("I cannot decide", None), ("A response that covers the passages", None),
    ("Response A: lists moons. Response B: lists planets.", None), ("[[A]] or maybe [[B]]", None),
    ("Answer: A. Verdict: B", None), ("a", None), ("<script>B</script>", None),
    ("A: A\n\nA is the correct answer.", "A"),  # the embedded 135M judge's usual replies
    ("A is the correct answer.", "A"), ("Response B is the best one", "B"),
    ("A is the more suitable response. A is the more appropriate choice", "A"),
    ("A: A\n\nA: A\n\nB: B\n\nA: A", None),  # lines opening with both letters: no verdict
])
def test_parse_verdict(reply, expected):
    assert pairwise.parse_verdict(reply) == expected


def test_pair_outcomes_both_orders():
    out = pairwise.pair_outcome
    assert out({"ab": "B", "ba": "A"}) == pairwise.PairOutcome("win", False)
    assert out({"ab": "A", "ba": "B"}) == pairwise.PairOutcome("loss", False)
    assert out({"ab": "A", "ba": "A"}) == pairwise.PairOutcome("tie", True)  # position bias
    assert out({"ab": "B", "ba": "B"}) == pairwise.PairOutcome("tie", True)
    assert out({"ab": "tie", "ba": "A"}) == pairwise.PairOutcome("tie", False)
    assert out({"ab": None, "ba": "A"}) == pairwise.PairOutcome("unparseable", False)
    assert out({"ab": "B", "ba": "A"}, failed=True).outcome == "failed"


def test_wilson_and_sign_test_against_hand_computed_values():
    # Wilson, z = 1.959964: 7/10 -> centre (0.7 + z²/20) / (1 + z²/10) = 0.644493,
    # half-width z·sqrt(0.7·0.3/10 + z²/400) / (1 + z²/10) = 0.247715
    low, high = pairwise.wilson_interval(7, 10)
    assert low == pytest.approx(0.396778, abs=1e-6) and high == pytest.approx(0.892209, abs=1e-6)
    low, high = pairwise.wilson_interval(0, 5)  # (0, z²/(5 + z²)) = (0, 0.434482)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(0.434482, abs=1e-6)
    assert pairwise.wilson_interval(0, 0) is None
    # sign test: 8 wins, 2 losses -> 2·(C(10,8) + C(10,9) + C(10,10)) / 2^10 = 112/1024
    assert pairwise.sign_test(8, 2) == pytest.approx(112 / 1024, abs=1e-12)
    assert pairwise.sign_test(5, 5) == pytest.approx(1.0)
    assert pairwise.sign_test(3, 0) == pytest.approx(0.25)  # 2 · 1/8
    assert pairwise.sign_test(0, 0) is None
    outcomes = ([pairwise.PairOutcome("win", False)] * 8 + [pairwise.PairOutcome("loss", False)] * 2
                + [pairwise.PairOutcome("tie", True)] * 3 + [pairwise.PairOutcome("tie", False)]
                + [pairwise.PairOutcome("unparseable", False)] * 2)
    stats = pairwise.preference_stats(outcomes)
    assert (stats["wins"], stats["ties"], stats["losses"], stats["decided"], stats["unparseable"]) == (8, 4, 2, 14, 2)
    assert stats["rate"] == pytest.approx(8 / 14) and stats["inconsistent_share"] == pytest.approx(3 / 14)
    assert stats["sign_test_p"] == pytest.approx(112 / 1024)
    assert (stats["ci_low"], stats["ci_high"]) == pytest.approx(pairwise.wilson_interval(8, 14))


# ---------------------------------------------------------------------------- the experiment
def test_run_judges_both_orders_and_counts_ties(tmp_path):
    judge_client = client(judge, "judge", cache_path=tmp_path / "llm.sqlite")
    generator = client(generate, "generator", cache_path=tmp_path / "llm.sqlite")
    config = preference.PreferenceConfig(max_passages=2, passage_chars=120)
    result = preference.run_preference(data(), assignments(), TYPOLOGY, TEMPLATES, judge_client,
                                       preference.AnswerSide(generator), preference.AnswerSide(generator), config)
    pairs = {p["qid"]: p for p in result["pairs"]}
    assert list(pairs) == ["q1", "q2", "q3", "q4"]
    assert result["excluded"] == {"not a judged query": ["q9"], "no highly relevant passage with text": ["q5"],
                                  "over max_queries": []}
    assert {q: (p["outcome"], p["inconsistent"]) for q, p in pairs.items()} == {
        "q1": ("win", False), "q2": ("tie", True), "q3": ("loss", False), "q4": ("unparseable", False)}
    # both orders were asked: the baseline first as A, then the aware answer as A; raw replies stored
    judge_calls = judge_client.backend.calls
    assert len(judge_calls) == 8
    first, second = (responses(c[-1]["content"]) for c in judge_calls[:2])
    assert first[0].startswith("base") and first[1].startswith("aware") and second == first[::-1]
    assert pairs["q2"]["verdicts"]["ab"] == {"raw": "A", "verdict": "A", "winner": "baseline"}
    assert pairs["q2"]["verdicts"]["ba"] == {"raw": "A", "verdict": "A", "winner": "aware"}
    assert pairs["q4"]["verdicts"]["ba"]["raw"] == "I cannot tell." and pairs["q4"]["verdicts"]["ba"]["verdict"] is None
    # the baseline is generated once per query, the aware answer with the first reason's sentence
    assert len(generator.backend.calls) == 8
    assert pairs["q1"]["difficulty"] == "This query requires numerical data."
    assert ("Question: how many moons has mars\nThis query requires numerical data.\nAnswer:"
            in pairs["q1"]["prompts"]["aware"][-1]["content"])
    assert pairs["q1"]["answers"] == {"baseline": "base answer to how many moons has mars",
                                      "aware": "aware answer to how many moons has mars"}
    # passages: grade 3 then 2, capped at 2, truncated at a word boundary
    assert [(p["pid"], p["grade"]) for p in pairs["q1"]["passages"]] == [("rq1", 3), ("hq1", 2)]
    assert len(pairs["q1"]["passages"][0]["text"]) <= 120 and pairs["q1"]["passages"][0]["text"].endswith("…")
    overall = result["summary"]["overall"]
    assert (overall["wins"], overall["ties"], overall["losses"], overall["unparseable"]) == (1, 1, 1, 1)
    assert overall["rate"] == pytest.approx(1 / 3) and overall["inconsistent_share"] == pytest.approx(1 / 3)
    assert overall["judge"] == "scripted:judge"
    assert result["summary"]["by_task"]["h2g"]["losses"] == 1 and result["summary"]["by_task"]["h2r"]["wins"] == 1
    assert result["summary"]["by_category"][NUMERICAL]["pairs"] == 2  # q1 (first reason) and q4
    assert PRODUCT in result["summary"]["by_category"]  # q2
    assert result["templates"]["sentences"][NUMERICAL] == "This query requires numerical data."
    # stored, reloadable, the same id for the same configuration
    path = preference.save_result(result, tmp_path)
    assert preference.load_result(path)["summary"] == json.loads(json.dumps(result["summary"]))
    again = preference.run_preference(data(), assignments(), TYPOLOGY, TEMPLATES, judge_client,
                                      preference.AnswerSide(generator), preference.AnswerSide(generator), config)
    assert again["id"] == result["id"] and again["summary"] == result["summary"]
    assert len(judge_calls) == 8 and len(generator.backend.calls) == 8  # the rerun made no call: all cached
    other = preference.run_preference(data(), assignments(), TYPOLOGY, TEMPLATES, judge_client,
                                      preference.AnswerSide(generator), preference.AnswerSide(generator),
                                      preference.PreferenceConfig(reason_mode="all", max_passages=2,
                                                                  passage_chars=120))
    assert other["id"] != result["id"]
    q1 = next(p for p in other["pairs"] if p["qid"] == "q1")
    assert q1["difficulty"] == "This query requires numerical data. This query uses specific product terminology."
    assert other["summary"]["by_category"][PRODUCT]["pairs"] == 2


def test_run_with_imported_answers_failures_and_query_cap(tmp_path):
    """Imported difficulty-aware answers, a query without one, a judge call that fails (recorded, not
    cached) and succeeds on the rerun, and the query cap."""
    down = {"judge": True}

    def flaky_judge(messages):
        if down["judge"] and "iphone" in messages[-1]["content"]:
            raise LLMError("judge timed out")
        return judge(messages)

    cache = tmp_path / "llm.sqlite"
    imported = {"q1": "aware imported moons", "q2": "aware imported battery", "q4": "aware imported prism"}
    judge_client = client(flaky_judge, "judge", cache_path=cache)

    def run():
        return preference.run_preference(
            data(), assignments(), TYPOLOGY, TEMPLATES, judge_client,
            preference.AnswerSide(client(generate, cache_path=cache)),
            preference.AnswerSide(imported=imported, imported_from="big.jsonl"), preference.PreferenceConfig(max_queries=3))

    result = run()
    pairs = {p["qid"]: p for p in result["pairs"]}
    assert result["excluded"]["over max_queries"] == ["q4"] and list(pairs) == ["q1", "q2", "q3"]
    assert pairs["q3"]["outcome"] == "failed"
    assert "no imported answer for qid q3" in pairs["q3"]["generation_errors"]["aware"]
    assert pairs["q1"]["answers"]["aware"] == "aware imported moons" and pairs["q1"]["outcome"] == "win"
    assert pairs["q2"]["outcome"] == "failed" and "judge timed out" in pairs["q2"]["verdicts"]["ab"]["error"]
    assert result["generators"]["aware"]["backend"] == "imported" and "digest" in result["generators"]["aware"]
    overall = result["summary"]["overall"]
    assert (overall["failed"], overall["decided"], overall["wins"]) == (2, 1, 1)
    calls = len(judge_client.backend.calls)
    down["judge"] = False  # the judge is back: only the failed calls are made again
    again = {p["qid"]: p for p in run()["pairs"]}
    assert len(judge_client.backend.calls) == calls + 2
    assert again["q2"]["outcome"] == "tie" and again["q2"]["inconsistent"]


def test_llm_reason_assignment_parses_numbers_and_never_guesses(tmp_path):
    replies = {"how many moons has mars": "1, 3", "iphone 12 battery life": "2.", "who is the president": "none"}

    def respond(messages):
        query = re.search(r"Query: (.*)", messages[-1]["content"]).group(1)
        return replies[query]

    made, report = assign_reasons(
        client(respond, "assigner", cache_path=tmp_path / "llm.sqlite"), TYPOLOGY, data().topics, {"h2r": ["q1", "q2"], "h2g": ["q3"]})
    assert [(a.qid, a.task, a.categories) for a in made] == [
        ("q1", "h2r", (NUMERICAL, "Ambiguous subject references")), ("q2", "h2r", (PRODUCT,))]
    assert report["h2g"]["unassigned"] == ["q3"] and report["h2r"]["assigned"] == 2
    assert made[0].source == "llm:scripted:assigner"
    assert parse_numbers("3.5 or 12, 2, 2", 4) == [2]


# ---------------------------------------------------------------------------- command line
def _prefer_files(tmp_path):
    """A DL19 data folder plus the imported inputs of a ``prefer`` run: reasons of four queries and their
    baseline and difficulty-aware answers."""
    folder = dl19_folder(tmp_path)
    reasons = tmp_path / "reasons.jsonl"
    reasons.write_text("".join(json.dumps({"qid": a.qid, "task": a.task, "categories": list(a.categories)}) + "\n"
                               for a in assignments()[:4]))
    base, aware = tmp_path / "base.jsonl", tmp_path / "aware.jsonl"
    base.write_text("".join(json.dumps({"qid": q, "text": f"base answer {q}"}) + "\n" for q in ("q1", "q2", "q3", "q4")))
    aware.write_text("".join(json.dumps({"qid": q, "text": f"aware answer {q}"}) + "\n" for q in ("q1", "q2", "q3", "q4")))
    return folder, reasons, base, aware


def test_cli_prefer_with_imported_answers_and_reasons(tmp_path, monkeypatch, capsys):
    """``python -m pipeline prefer`` end to end; the judge spec resolves to a scripted client (the
    boundary: no model server here), everything else is the real command."""
    import pipeline.llm
    from pipeline.cli import main

    cache = tmp_path / "llm.sqlite"
    specs = []
    monkeypatch.setattr(pipeline.llm, "make_client",
                        lambda spec="auto", **kw: specs.append(spec) or client(judge, "judge", cache_path=cache))
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    folder, reasons, base, aware = _prefer_files(tmp_path)
    argv = ["prefer", "--dataset", "dl19", "--data", str(folder), "--reasons", str(reasons), "--baseline-answers",
            str(base), "--aware-answers", str(aware), "--judge", "ollama:some-judge", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert specs == ["ollama:some-judge"]  # the judge only: both answer sides were imported
    assert (out["overall"]["wins"], out["overall"]["ties"], out["overall"]["losses"], out["overall"]["unparseable"]) \
        == (1, 1, 1, 1)
    assert out["study_rate"] == 0.6456 and out["judge"] == "scripted:judge"
    assert out["generators"] == {"baseline": f"imported:{base}", "aware": f"imported:{aware}"}
    assert set(out["by_task"]) == {"h2r", "h2g"} and out["by_category"][NUMERICAL]["pairs"] == 2
    stored = preference.load_result(out["path"])
    assert stored["id"] == out["id"] and stored["assignment_report"] == {"imported": str(reasons)}
    # the text output names the unit and both rules beside the study's figure
    assert main(argv[:-1]) == 0
    text = capsys.readouterr().out
    assert "  all: 4 queries (4 pairs): 1 win / 1 tie / 1 loss" in text
    assert "verdict rule: 4 of 7 verdicts prefer the difficulty-aware answer (57.1%)" in text  # q1 2, q2 1, q4 1
    assert "its counting rule is not stated" in text
    # bad input: one line naming file and line, exit status 2, nothing stored
    reasons.write_text('{"qid": "q1", "task": "h2r", "categories": ["nope"]}\n')
    assert main(argv) == 2
    assert f"{reasons}:1: category 'nope'" in capsys.readouterr().err
    assert len(preference.list_results("dl19")) == 1


def test_reasons_from_the_failure_typology_store(tmp_path):
    """The typology's latest finished run per task gives the categories and the assigned reasons;
    an unparseable assignment is listed, never used."""
    from pipeline.typology.categories import Assignment
    from pipeline.typology.induction import HardQuery
    from pipeline.typology.store import TypologyStore

    induced = [Category("Vague product names", "Names a product loosely."),
               Category("Numerical data requirements", "Asks for a number.")]
    with TypologyStore(tmp_path / "typology.sqlite") as store:
        for run_id, status in (("dl19-h2r-old", "done"), ("dl19-h2r-new", "done"), ("dl20-h2r", "done")):
            store.start_run(run_id, dataset=run_id[:4], task="h2r", source="induced", typology_label="induced",
                            hard_set={}, config={}, provenance={"label": "scripted:t"},
                            queries=[HardQuery("q1", "how many moons", ""), HardQuery("q2", "iphone", "")])
            store.save_typology(run_id, induced, "unchanged")
            store.save_assignments(run_id, [
                Assignment("q1", "h2r", [(induced[1], "asks a count"), (induced[0], "")], "ok"),
                Assignment("q2", "h2r", [], "unparseable", raw="???")])
        typology, made, report = difficulty.reasons_from_typology_store("dl19", store)
    assert [(a.qid, a.task, a.categories) for a in made] == [("q1", "h2r", ("Numerical data requirements",
                                                                            "Vague product names"))]
    assert report["h2r"]["run_id"] == "dl19-h2r-new" and report["h2r"]["not assigned"] == ["q2"]
    assert [c.name for c in typology.for_task("h2r")] == ["Vague product names", "Numerical data requirements"]
    # an induced category without a template sentence gets the default one, from its description
    assert TEMPLATES.sentence(typology.find("vague product names")) == (
        "This query is difficult because of vague product names: Names a product loosely.")
    with TypologyStore(tmp_path / "typology.sqlite") as store, pytest.raises(DifficultyInputError, match="dl21"):
        difficulty.reasons_from_typology_store("dl21", store)


def _unit(qid, task, outcome, winners, inconsistent=False, categories=("c",)):
    verdicts = {order: {"winner": w} for order, w in zip(pairwise.ORDERS, winners)}
    return {"qid": qid, "task": task, "categories_used": list(categories), "outcome": outcome,
            "inconsistent": inconsistent, "verdicts": verdicts}


def test_the_unit_is_a_query_and_both_rules_are_reported():
    """q1 is hard in two tasks (a win and a loss: one tied query, not a win and a loss); q2 and q3 win;
    q4 is position-inconsistent (a tie). By hand: 4 queries, 2 wins / 2 ties / 0 losses, rate 1/2,
    sign test binomtest(2, 2) = 0.5; verdicts: 2+0+2+2+1 = 7 of 10 prefer the aware answer."""
    units = [_unit("q1", "h2r", "win", ["aware", "aware"]), _unit("q1", "h2g", "loss", ["baseline", "baseline"]),
             _unit("q2", "h2r", "win", ["aware", "aware"]), _unit("q3", "h2j", "win", ["aware", "aware"]),
             _unit("q4", "h2r", "tie", ["aware", "baseline"], inconsistent=True)]
    s = preference.summarise(units, "judge")["overall"]
    assert (s["queries"], s["pairs"], s["queries_with_several_pairs"]) == (4, 5, 1)
    assert (s["wins"], s["ties"], s["losses"], s["decided"]) == (2, 2, 0, 4) and s["unit"] == "query"
    assert s["rate"] == 0.5 and s["sign_test_p"] == pytest.approx(0.5)
    assert (s["ci_low"], s["ci_high"]) == pytest.approx(pairwise.wilson_interval(2, 4))
    assert s["pair_outcomes"]["win"] == 3 and s["pair_outcomes"]["loss"] == 1
    assert s["inconsistent"] == 1 and s["inconsistent_share"] == 0.25
    assert s["verdict_rule"] == {"verdicts": 10, "aware": 7, "baseline": 3, "tie": 0, "rate": 0.7}
    by_task = preference.summarise(units, "judge")["by_task"]
    assert (by_task["h2r"]["wins"], by_task["h2r"]["ties"]) == (2, 1) and by_task["h2g"]["losses"] == 1
    # a query's pairs: more wins than losses wins, equal is a tie, none decided is unparseable / failed
    W, L, U, F = (pairwise.PairOutcome(o, False) for o in ("win", "loss", "unparseable", "failed"))
    assert [pairwise.query_outcome(o).outcome for o in ([W, W, L], [W, L], [U, L], [U, F], [U])] == \
        ["win", "tie", "loss", "failed", "unparseable"]


def test_reasons_from_the_typology_store_come_from_one_model(tmp_path):
    """--reasons typology: each task's latest run *of one model*; the newest run's model by default."""
    from pipeline.typology.categories import Assignment
    from pipeline.typology.induction import HardQuery
    from pipeline.typology.store import TypologyStore

    cats = [Category("Numerical data requirements", "Asks for a number.")]
    with TypologyStore(tmp_path / "typology.sqlite") as store:
        for run_id, task, model in (("h2r-big", "h2r", "ollama:qwen3:8b"), ("h2g-big", "h2g", "ollama:qwen3:8b"),
                                    ("h2r-small", "h2r", "embedded:SmolLM2")):  # created in this order
            store.start_run(run_id, dataset="dl19", task=task, source="induced", typology_label="induced",
                            hard_set={}, config={}, provenance={"label": model},
                            queries=[HardQuery("q1", "how many moons", "")])
            store.save_typology(run_id, cats, "unchanged")
            store.save_assignments(run_id, [Assignment("q1", task, [(cats[0], "a count")], "ok")])
        store.conn.execute("UPDATE runs SET created = CASE run_id WHEN 'h2r-big' THEN 1 WHEN 'h2g-big' THEN 2 "
                           "ELSE 3 END")
        store.conn.commit()
        _, made, report = difficulty.reasons_from_typology_store("dl19", store)  # newest: the small model's
        assert report["model"] == "embedded:SmolLM2" and [a.task for a in made] == ["h2r"]
        assert report["h2r"]["run_id"] == "h2r-small" and "latest is by ollama:qwen3:8b" in report["skipped"]["h2g"]
        assert difficulty.reasons_made_by({"typology_store": report})[0] == "reasons' model (typology store)"
        _, made, report = difficulty.reasons_from_typology_store("dl19", store, model="ollama:qwen3:8b")
        assert {a.task: a.source for a in made} == {"h2r": "typology run h2r-big", "h2g": "typology run h2g-big"}
        assert report["skipped"] == {} and report["h2r"]["provenance"] == {"label": "ollama:qwen3:8b"}
        with pytest.raises(DifficultyInputError, match="no finished typology run by model 'x'"):
            difficulty.reasons_from_typology_store("dl19", store, model="x")


# ---------------------------------------------------------------------------- the job's progress record
def test_run_writes_its_progress_record_stage_by_stage(tmp_path, monkeypatch):
    """Three stages: 4 baseline answers (one per query), 4 difficulty-aware answers (one per pair),
    8 judge calls (two orders per pair); each stage's count ends at its total."""
    from core.jobs import progress as job_progress
    from tests.support.progress_helpers import RecordingWriter

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    judge_client = client(judge, "judge", cache_path=tmp_path / "llm.sqlite")
    generator = client(generate, "generator", cache_path=tmp_path / "llm.sqlite")
    with RecordingWriter("prefer-t1", preference.STAGES, interval=0) as tracker:
        preference.run_preference(data(), assignments(), TYPOLOGY, TEMPLATES, judge_client,
                                  preference.AnswerSide(generator), preference.AnswerSide(generator),
                                  progress=tracker)
    ended = [(r["stage_index"], r["stage"], r["done"], r["total"], r["unit"]) for r in tracker.ended]
    assert ended == [(1, "baseline answers (one per query)", 4, 4, "answer"),
                     (2, "difficulty-aware answers (one per pair)", 4, 4, "answer")]
    record = job_progress.read_progress("prefer-t1")
    assert (record["status"], record["stage_index"], record["stages"], record["stage"]) == (
        "completed", 3, 3, "pairwise judging, both orders")
    assert (record["done"], record["total"], record["unit"]) == (8, 8, "call")
    assert len(judge_client.backend.calls) == 8


def test_cli_prefer_progress_key_writes_the_record_and_a_failure_ends_it(tmp_path, monkeypatch, capsys):
    """``prefer --progress-key``: the record the page's job names; an error ends it as failed with the
    error line; a key that is not a key is refused by argparse before any work."""
    import pipeline.llm
    from core.jobs import progress as job_progress
    from pipeline.cli import main

    cache = tmp_path / "llm.sqlite"
    monkeypatch.setattr(pipeline.llm, "make_client",
                        lambda spec="auto", **kw: client(judge, "judge", cache_path=cache))
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    folder, reasons, base, aware = _prefer_files(tmp_path)
    argv = ["prefer", "--dataset", "dl19", "--data", str(folder), "--reasons", str(reasons), "--baseline-answers",
            str(base), "--aware-answers", str(aware), "--judge", "ollama:some-judge", "--json",
            "--progress-key", "prefer-cli"]
    assert main(argv) == 0
    record = job_progress.read_progress("prefer-cli")
    # imported reasons: no assignment stage; imported answers count as answered at once
    assert (record["status"], record["stage_index"], record["stages"], record["done"], record["total"]) == (
        "completed", 3, 3, 8, 8)
    reasons.write_text('{"qid": "q1", "task": "h2r", "categories": ["nope"]}\n')
    assert main(argv) == 2  # bad input (core.cli)
    record = job_progress.read_progress("prefer-cli")
    assert record["status"] == "failed" and f"{reasons}:1: category 'nope'" in record["error"]
    assert job_progress.describe(record).startswith(f"failed: {reasons}:1: category 'nope'")  # no "stage 0 of 3"
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main([*argv[:-1], "../elsewhere"])
    assert exit_.value.code == 2 and "--progress-key" in capsys.readouterr().err


def test_the_model_that_made_the_reasons_is_read_from_how_they_were_made():
    """What gates a result on its reasons: the model that assigned them in the run, or the typology store
    runs' model; a reasons FILE, and a record from before runs kept the provenance, name none."""
    from pipeline.llm.base import Provenance

    small = Provenance("embedded", "smollm2", parameters_b=0.135, size_source="GGUF metadata")
    big = Provenance("ollama", "qwen3:8b", parameters_b=8.2, size_source="ollama /api/show")
    assert difficulty.reasons_made_by({"assigned_by": small.as_dict(), "asked": ["q1"]}) == ("assigner", small)
    store_how = {"typology_store": {"h2r": {"run_id": "r", "provenance": big.as_dict()}, "model": big.label,
                                    "skipped": {"h2g": "no finished run by it"}}}
    assert difficulty.reasons_made_by(store_how) == ("reasons' model (typology store)", big)
    assert difficulty.reasons_made_by({"typology_store": {"h2r": {"run_id": "r"}, "model": "m", "skipped": {}}}) is None
    # issue 40: a reasons FILE counts as made by a model of unknown size unless its maker is named and sized
    role, maker = difficulty.reasons_made_by({"imported": "reasons.jsonl"})
    assert role == "reasons FILE's maker" and "unknown size" in maker.evidence_gate
    named = difficulty.reasons_made_by({"imported": "r.jsonl", "made_by": Provenance(
        "imported", "my-model", parameters_b=8.0, size_source="stated by the user").as_dict()})[1]
    assert named.model == "my-model" and named.evidence_gate == ""
    assert difficulty.reasons_made_by(None) is None
