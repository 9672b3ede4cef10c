"""Validation figures against hand-computed values (see the worked example in each test)."""
from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from pipeline.validation import KAPPA_UNDEFINED, report

# dl19/h2r, categories X, Y, Z (Z: nobody, neither LLM nor annotators, uses it).
# LLM assigned q1: X; q2: X, Y.
LLM = {("q1", "X"): 1, ("q1", "Y"): 0, ("q1", "Z"): 0, ("q2", "X"): 1, ("q2", "Y"): 1, ("q2", "Z"): 0}
ANSWERS = {"ann": {("q1", "X"): 1, ("q1", "Y"): 0, ("q1", "Z"): 0, ("q2", "X"): 0, ("q2", "Y"): 1, ("q2", "Z"): 0},
           "bob": {("q1", "X"): 1, ("q1", "Y"): 1, ("q1", "Z"): 0, ("q2", "X"): 1, ("q2", "Y"): 1, ("q2", "Z"): 0}}


def rows(answers=ANSWERS, llm=LLM):
    return [{"annotator": a, "dataset": "dl19", "task": "h2r", "qid": q, "category": c,
             "llm_assigned": str(llm[(q, c)]), "human_applicable": str(v)}
            for a, d in answers.items() for (q, c), v in d.items()]


def test_llm_against_each_annotator_and_the_union():
    out = report(rows())
    assert out["n_rows"] == 12 and out["annotators"] == ["ann", "bob"]
    assert out["categories"] == ["h2r: X", "h2r: Y", "h2r: Z"]
    ann = out["llm_vs_annotator"]["ann"]["overall"]
    # ann: TP = q1X, q2Y; FP = q2X; FN = none; TN = q1Y, q1Z, q2Z
    assert (ann["tp"], ann["fp"], ann["fn"], ann["tn"]) == (2, 1, 0, 3)
    assert ann["accuracy"] == pytest.approx(5 / 6) and ann["precision"] == pytest.approx(2 / 3)
    assert ann["recall"] == 1.0 and ann["n_decisions"] == 6 and ann["n_queries"] == 2
    bob = out["llm_vs_annotator"]["bob"]["overall"]
    # bob: TP = q1X, q2X, q2Y; FN = q1Y; TN = q1Z, q2Z
    assert (bob["accuracy"], bob["precision"], bob["recall"]) == (pytest.approx(5 / 6), 1.0, 0.75)
    x = out["llm_vs_annotator"]["ann"]["per_category"]["h2r: X"]
    assert (x["precision"], x["recall"], x["accuracy"], x["n_decisions"]) == (0.5, 1.0, 0.5, 2)
    z = out["llm_vs_annotator"]["ann"]["per_category"]["h2r: Z"]
    assert z["accuracy"] == 1.0 and z["precision"] is None and z["recall"] is None
    assert set(z["undefined"]) == {"precision", "recall"}
    union = out["llm_vs_union"]["overall"]  # union = ann OR bob = bob's answers here
    assert (union["tp"], union["fp"], union["fn"], union["tn"]) == (3, 0, 1, 2)
    assert union["n_decisions"] == 6


def test_kappa_overall_per_category_and_undefined():
    out = report(rows())["kappa"]["ann | bob"]
    # ann = 1 0 0 0 1 0, bob = 1 1 0 1 1 0: p_o = 4/6, p_e = (2/6)(4/6) + (4/6)(2/6) = 4/9
    # kappa = (2/3 - 4/9) / (1 - 4/9) = 0.4
    overall = out["overall"]
    assert overall["kappa"] == pytest.approx(0.4) and overall["agreement"] == pytest.approx(4 / 6)
    assert (overall["n_decisions"], overall["n_queries"], overall["only_second"]) == (6, 2, 2)
    ann = [v for _, v in sorted(ANSWERS["ann"].items())]
    bob = [v for _, v in sorted(ANSWERS["bob"].items())]
    assert overall["kappa"] == pytest.approx(cohen_kappa_score(ann, bob))
    # X: ann (1, 0), bob (1, 1): p_o = 1/2, p_e = 1/2 -> 0
    assert out["per_category"]["h2r: X"]["kappa"] == pytest.approx(0.0)
    z = out["per_category"]["h2r: Z"]
    assert z["kappa"] is None and z["undefined"] == KAPPA_UNDEFINED and z["n_decisions"] == 2
    assert z["agreement"] == 1.0


def test_union_over_decisions_any_annotator_made_and_kappa_over_common_ones():
    answers = {"ann": dict(ANSWERS["ann"]), "bob": {k: v for k, v in ANSWERS["bob"].items() if k[0] == "q1"}}
    answers["ann"][("q2", "Z")] = 1  # ann adds Z to q2; only ann saw q2
    out = report(rows(answers))
    union = out["llm_vs_union"]
    assert union["overall"]["n_decisions"] == 6 and union["overall"]["n_queries"] == 2
    assert union["per_category"]["h2r: Z"]["fn"] == 1  # from ann alone
    assert union["per_category"]["h2r: Y"]["fn"] == 1  # q1 Y from bob
    kappa = out["kappa"]["ann | bob"]["overall"]
    assert kappa["n_decisions"] == 3 and kappa["n_queries"] == 1


def test_conflicting_llm_assignments_are_an_error_and_empty_input_reports_nothing():
    bad = rows()
    bad[-1]["llm_assigned"] = "1"  # bob's q2 Z said the LLM assigned it, ann's row says not
    with pytest.raises(ValueError, match="annotators disagree on whether the LLM assigned 'Z'"):
        report(bad)
    empty = report([])
    assert empty["n_rows"] == 0 and empty["kappa"] == {} and empty["llm_vs_union"]["overall"]["accuracy"] is None
