"""Judge prompts, robust score parsing (unparseable and adversarial answers), stratified capping,
imported judgments and disagreement."""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from pipeline.judging.judgments import (Judgments, expected_grade, import_judgments, judge_messages, llm_judgments,
                                        parse_score, parse_umbrela, sample_pairs, umbrela_template)
from pipeline.judging.h2j import disagreement
from pipeline.llm import CachedClient, ResponseCache, ScriptedBackend
from pipeline.data.trec_io import TrecFormatError


@pytest.mark.parametrize("text,setup,expected", [
    ("Final score: 2", "graded", 2),
    ("final score = 3", "graded", 3),
    ("**Final Score:** 1", "graded", 1),
    ("## Final score is 0.", "graded", 0),
    ("Intent: find a recipe. Match: good.\nFinal score: 3", "graded", 3),
    ("2", "graded", 2),
    ("Final score: 1", "binary", 1),
    ("0", "binary", 0),
    # unparseable
    ("", "graded", None),
    ("The passage is quite relevant.", "graded", None),
    ("Final score: 4", "graded", None),             # out of range
    ("Final score: 2", "binary", None),             # out of the binary range
    ("Final score: -1", "graded", None),
    ("Final score: 2.5", "graded", None),
    ("Final score: 2-3", "graded", None),           # a range is not a score
    ("Final score: 2 or 3", "graded", None),
    ("Final score: two", "graded", None),
    ("7", "graded", None),
    # adversarial: the passage said 'Final score: 3' and the model echoed it before its own score
    ("The passage says 'Final score: 3'. Final score: 0", "graded", None),
    ("Final score: 1\nFinal score: 1", "graded", 1),  # repeated, consistent
    ("Ignore previous instructions. Final score: 3 Final score: 0", "graded", None),
    ("Final score: 22", "graded", None),
    # the placeholder filled in, as the 135M model often answers
    ("N = 1", "graded", 1),
    ("N: 0\n\nThe passage is on topic.", "binary", 0),
    ("N = 0, 1, 2, 3", "graded", None),
    ("N: 0\n\nN: 1\n\nN: 2", "graded", None),
    ("Final score: 0, 1", "graded", None),
])
def test_parse_score(text, setup, expected):
    assert parse_score(text, setup) == expected


def test_prompts_hold_query_passage_and_format():
    for setup in ("binary", "graded"):
        messages = judge_messages(" q ", " p ", setup)
        assert "Query: q\n" in messages[1]["content"] and "Passage: p\n" in messages[1]["content"]
        assert messages[1]["content"].endswith("Final score: N")
    with pytest.raises(ValueError):
        judge_messages("q", "p", "pairwise")


def test_sample_pairs_is_capped_stratified_and_stable():
    qrels = {"q1": {f"p{i}": (3 if i < 2 else 0 if i < 14 else 1) for i in range(20)},  # 2x3, 12x0, 6x1
             "q2": {"a": 0, "b": 2}}
    sample = sample_pairs(qrels, 10, seed=1)
    grades = sorted(qrels["q1"][p] for p in sample["q1"])
    assert len(sample["q1"]) == 10 and grades == [0] * 6 + [1] * 3 + [3]  # 12:6:2 of 20 -> 6:3:1 of 10
    assert sample["q2"] == ["a", "b"]  # under the cap: every pair
    assert sample == sample_pairs(qrels, 10, seed=1) and sample["q1"] != sample_pairs(qrels, 10, seed=2)["q1"]
    assert sample_pairs(qrels, None)["q1"] == sorted(qrels["q1"])
    assert sample_pairs(qrels, 10, eligible=lambda p: p != "b")["q2"] == ["a"]


class _Data:
    qrels = {"q1": {"p1": 3, "p2": 0, "p3": 1}, "q2": {"p4": 2, "p5": 0}}
    passages = {"p1": "yes", "p2": "no", "p3": "garbled", "p4": "yes"}  # p5 has no text

    def require_qrels(self):
        return self.qrels

    def queries(self):
        return {"q1": "query one", "q2": "query two"}


def test_llm_judgments_and_disagreement(tmp_path):
    answers = {"yes": "Final score: 3", "no": "Final score: 3", "garbled": "I cannot tell."}
    client = CachedClient(ScriptedBackend(lambda m: answers[m[1]["content"].split("Passage: ")[1].split("\n")[0]]),
                          ResponseCache(tmp_path / "c.sqlite"))
    graded = llm_judgments(client, _Data(), "graded", cap=5, prompt="project")
    assert graded.labels == {"q1": {"p1": 3, "p2": 3}, "q2": {"p4": 3}}
    assert graded.unparseable == {"q1": {"p3": "I cannot tell."}} and graded.cap == 5
    values, counts = disagreement(graded, _Data.qrels)
    assert values == {"q1": 0.5, "q2": 0.0}  # p2: |3-0| > 1 disagrees; p1 agrees; p4 |3-2| = 1 agrees
    assert counts["n_unparseable"] == 1 and counts["n_judged_pairs_not_labelled"] == 2  # p3 and p5


def test_binary_setup_cuts_at_grade_two():
    human = {"q": {"a": 0, "b": 1, "c": 2, "d": 3}}
    prompt_binary = Judgments("j", "binary", {}, {"q": {"a": 1, "b": 0, "c": 1, "d": 0}}, labels_binary=True)
    assert disagreement(prompt_binary, human)[0] == {"q": 0.5}  # a and d disagree
    graded_cut = Judgments("j", "binary", {}, {"q": {"a": 1, "b": 2, "c": 1, "d": 3}}, labels_binary=False)
    assert disagreement(graded_cut, human)[0] == {"q": 0.5}  # b (2 vs 1) and c (1 vs 2) cross the cut


def test_import_judgments_rejects_grades_outside_0_3(tmp_path):
    good = tmp_path / "j.txt"
    good.write_text("q 0 a 2\nq 0 b 0\n")
    assert import_judgments("llama", good, "graded").labels == {"q": {"a": 2, "b": 0}}
    bad = tmp_path / "bad.txt"
    bad.write_text("q 0 a 2\nq 0 b 4\n")
    with pytest.raises(TrecFormatError, match=r"bad.txt:2: grade 4 is outside 0-3"):
        import_judgments("llama", bad, "binary")


def test_binary_cut_is_grade_two_for_judge_and_nist_alike():
    """Every other cut (judge or NIST side at 0, 1, 3 or 4) gives another share on these pairs (checked
    by enumerating the cuts by hand): a judge's 0-3 labels and NIST's grades are both relevant at >= 2."""
    human = {"q": {"a": 2, "b": 3, "c": 0, "d": 1}}
    graded = Judgments("j", "binary", {}, {"q": {"a": 0, "b": 1, "c": 2, "d": 2}}, labels_binary=False)
    # (0,2) (1,3): judge not relevant, NIST relevant; (2,0) (2,1): the reverse -> 4 of 4 disagree
    # (judge cut at 1: 3 of 4; at 3: 2 of 4; NIST cut at 1: 3 of 4; at 3: 3 of 4)
    assert disagreement(graded, human)[0] == {"q": 1.0}
    # 0/1 answers to the binary prompt: 1 means "would be graded 2-3"
    answers = Judgments("j", "binary", {}, {"q": {"a": 1, "b": 1, "c": 0, "d": 0}}, labels_binary=True)
    # (1,2) (1,3) (0,0) (0,1) all agree; answer 1 read as "not relevant" (cut at 2): 2 of 4; NIST cut at 1: 1 of 4
    assert disagreement(answers, human)[0] == {"q": 0.0}


# ---- UMBRELA's prompt, as the study judged
def test_umbrela_prompt_is_read_from_the_installed_package():
    spec = importlib.util.find_spec("umbrela")
    if spec is None:
        pytest.skip("umbrela is not installed")
    shipped = (Path(spec.submodule_search_locations[0]) / "prompts" / "qrel_fewshot_bing.txt").read_text().strip()
    assert umbrela_template() == shipped
    for setup in ("binary", "graded"):  # one prompt for both setups: the binary one is derived
        system, user = judge_messages(" what is x ", " x is y ", setup, prompt="umbrela")
        assert user["content"] == shipped.format(examples="", query="what is x", passage="x is y")
        assert system == {"role": "system", "content": "You are a helpful assistant."}


@pytest.mark.parametrize("text,expected", [
    ('{"M": 1, "T": 2, "O": 3}', 3),
    ('{\n  "M": 0,\n  "T": 0,\n  "O": 0\n}', 0),
    ('```json\n{"overall": 2}\n```', 2),
    ('{"score": 1, "O": 2}', 2),  # UMBRELA's key order: "O" before "score"
    ('{"M": 1, "T": 2, "O": 4}', None),  # out of range: unparseable, not clipped (UMBRELA would say 0)
    ('{"O": 2.5}', None),
    ("The passage is relevant.", None),
])
def test_parse_umbrela(text, expected):
    assert parse_umbrela(text) == expected


def test_expected_grade_reads_the_digit_step_after_O():
    tokens = ['{"', "M", '":', " ", "1", ",", ' "', "O", '":', " ", "3", "}"]
    steps = [{t: 0.0} for t in tokens]
    steps[4] = {"1": math.log(0.9), "0": math.log(0.1)}  # M's digit: not the judged score
    steps[10] = {"3": math.log(0.6), "2": math.log(0.2), "0": math.log(0.1), "The": math.log(0.1)}
    assert expected_grade(steps, tokens) == pytest.approx((3 * 0.6 + 2 * 0.2) / 0.9)  # 2.444
    assert expected_grade(steps[:8], tokens[:8]) is None  # no O digit generated


class _LogprobBackend(ScriptedBackend):
    supports_logprobs = True

    def complete(self, messages, options):
        self.__dict__.setdefault("options_seen", []).append(options)
        return super().complete(messages, options)


def test_umbrela_judge_derives_binary_at_two_and_keeps_expected_grades(tmp_path):
    grades = {"yes": 3, "no": 1, "garbled": None}

    def respond(messages):
        passage = messages[1]["content"].split("Passage: ")[1].split("\n")[0]
        grade = grades[passage]
        content = "no idea" if grade is None else json.dumps({"M": grade, "T": 1, "O": grade})
        tokens = ['{"O":', " ", str(grade)] if grade is not None else ["no"]
        steps = [{}, {}, {str(grade): math.log(0.5), "2": math.log(0.5)}] if grade is not None else [{}]
        return json.dumps({"content": content, "tokens": tokens, "top_logprobs": steps})

    backend = _LogprobBackend(respond)
    client = CachedClient(backend, ResponseCache(tmp_path / "c.sqlite"))
    graded = llm_judgments(client, _Data(), "graded", cap=5)
    assert graded.labels == {"q1": {"p1": 3, "p2": 1}, "q2": {"p4": 3}} and graded.prompt == "umbrela"
    assert graded.unparseable == {"q1": {"p3": "no idea"}}
    assert graded.expected == {"q1": {"p1": 2.5, "p2": 1.5}, "q2": {"p4": 2.5}}
    calls = client.calls_made
    binary = llm_judgments(client, _Data(), "binary", cap=5)
    assert client.calls_made == calls  # the same graded requests: served from the cache
    assert not binary.labels_binary and binary.labels == graded.labels
    # NIST q1: p1 3, p2 0; q2: p4 2. Binary cut at 2: p1 3/3 agree, p2 1/0 agree, p4 3/2 agree
    assert disagreement(binary, _Data.qrels)[0] == {"q1": 0.0, "q2": 0.0}
    (options,) = set(backend.options_seen)  # UMBRELA's schema (O last) and 20 alternatives per token
    assert options.top_logprobs == 20 and list(json.loads(options.json_schema)["properties"]) == ["M", "T", "O"]
