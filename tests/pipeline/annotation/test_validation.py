"""Validation figures against hand-computed values (see the worked example in each test)."""
from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from pipeline.annotation.validation import DEFINITIONS, KAPPA_UNDEFINED, report

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
    assert out["n_rows"] == 12 and out["annotators"] == ["ann", "bob"] and out["models"] == [""]
    out = out["by_model"][""]  # rows without a model column: one unnamed model
    assert out["categories"] == ["h2r: X", "h2r: Y", "h2r: Z"]
    ann = out["llm_vs_annotator"]["ann"]["overall"]
    # ann: TP = q1X, q2Y; FP = q2X; FN = none; TN = q1Y, q1Z, q2Z
    assert (ann["tp"], ann["fp"], ann["fn"], ann["tn"]) == (2, 1, 0, 3)
    assert ann["cell_accuracy"] == pytest.approx(5 / 6) and ann["precision"] == pytest.approx(2 / 3)
    assert ann["exact_agreement"] == 0.5 and ann["n_exact_queries"] == 1  # q1 exact; q2 X judged wrong
    assert ann["recall"] == 1.0 and ann["n_decisions"] == 6 and ann["n_queries"] == 2
    bob = out["llm_vs_annotator"]["bob"]["overall"]
    # bob: TP = q1X, q2X, q2Y; FN = q1Y; TN = q1Z, q2Z
    assert (bob["cell_accuracy"], bob["precision"], bob["recall"]) == (pytest.approx(5 / 6), 1.0, 0.75)
    assert bob["added"] == 1 and bob["exact_agreement"] == 0.5  # q1 Y added
    x = out["llm_vs_annotator"]["ann"]["per_category"]["h2r: X"]
    assert (x["precision"], x["recall"], x["cell_accuracy"], x["n_decisions"]) == (0.5, 1.0, 0.5, 2)
    z = out["llm_vs_annotator"]["ann"]["per_category"]["h2r: Z"]
    assert z["cell_accuracy"] == 1.0 and z["precision"] is None and z["recall"] is None
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
    union = out["by_model"][""]["llm_vs_union"]
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
    assert empty["n_rows"] == 0 and empty["kappa"] == {} and empty["by_model"] == {}


def test_fifty_query_example_cell_accuracy_is_named_and_beside_the_figures_a_reader_expects():
    """Issue 18, item 5: 50 queries, 10 categories, two reasons assigned per query (100), 74 of them
    judged correct; the annotator adds one reason to 7 other queries. Counting every untagged
    category as a true negative gives a cell accuracy of 0.934 (the issue's example: 0.935), far
    above the share of assigned reasons judged correct (0.74) and the per-query exact agreement.

    By hand: TP = 74, FP = 26, FN = 7, TN = 500 - 107 = 393; cell accuracy = 467 / 500 = 0.934;
    precision = 74 / 100; recall = 74 / 81; exact queries = 50 - 26 (a wrong reason) - 7 (an added
    one) = 17, so exact agreement = 0.34."""
    cats = [f"C{i}" for i in range(10)]
    data = []
    for q in range(50):
        for i, c in enumerate(cats):
            llm = int(i < 2)
            human = llm
            if i == 1 and q < 26:
                human = 0  # one of the two reasons judged incorrect
            if i == 5 and 26 <= q < 33:
                human = 1  # a reason the LLM missed, added by the annotator
            data.append({"annotator": "ann", "dataset": "dl19", "task": "h2r", "qid": f"q{q}", "category": c,
                         "llm_assigned": llm, "human_applicable": human, "run_id": "run-1", "model": "m",
                         "llm_answer": "readable"})
    fig = report(data)["by_model"]["m"]["llm_vs_annotator"]["ann"]["overall"]
    assert (fig["tp"], fig["fp"], fig["fn"], fig["tn"]) == (74, 26, 7, 393)
    assert fig["cell_accuracy"] == pytest.approx(0.934) and "accuracy" not in fig  # only under its name
    assert fig["precision"] == pytest.approx(0.74) and fig["n_assigned"] == 100
    assert fig["recall"] == pytest.approx(74 / 81) and fig["added"] == 7
    assert fig["exact_agreement"] == pytest.approx(0.34) and fig["n_exact_queries"] == 17
    assert {"cell_accuracy", "precision", "recall", "exact_agreement", "kappa"} <= set(DEFINITIONS)
    assert "true negative" in DEFINITIONS["cell_accuracy"]


def test_unreadable_assignments_are_excluded_and_counted_never_true_negatives():
    """Issue 19, item 3: all assignments of a run unreadable gave "accuracy 0.800" made of true
    negatives. Unreadable (and unrecorded) assignments are left out of every figure and counted."""
    def row(annotator, qid, category, human, answer):
        return {"annotator": annotator, "dataset": "dl19", "task": "h2r", "qid": qid, "category": category,
                "llm_assigned": 0, "human_applicable": human, "run_id": "r", "model": "m", "llm_answer": answer}
    data = [row(a, q, c, int(c == "X" and a == "bob"), "unreadable") for a in ("ann", "bob")
            for q in ("q1", "q2") for c in ("X", "Y")]
    data += [row("ann", "q3", c, 0, "unknown") for c in ("X", "Y")]
    out = report(data)
    assert out["by_model"] == {} and out["models"] == []  # no figure made of true negatives
    assert out["excluded"] == {"unreadable": {"queries": 2, "decisions": 8}, "unknown": {"queries": 1, "decisions": 2},
                               "unknown_category": {"queries": 0, "decisions": 0}}
    assert out["kappa"]["ann | bob"]["overall"]["n_decisions"] == 0  # excluded from kappa too
    # beside a readable query, only the readable one counts
    data.append({**row("ann", "q4", "X", 1, "readable"), "llm_assigned": 1})
    fig = report(data)["by_model"]["m"]["llm_vs_annotator"]["ann"]["overall"]
    assert (fig["n_decisions"], fig["tn"], fig["tp"]) == (1, 0, 1)


def test_figures_are_per_model_and_runs_of_one_query_do_not_conflict():
    """Issue 18, item 2: two typology runs (two models) of the same query are two sets of decisions,
    each scored for its own model; the same query in two runs is not a conflict."""
    def row(run, model, llm, human):
        return {"annotator": "ann", "dataset": "dl19", "task": "h2r", "qid": "q1", "category": "X",
                "llm_assigned": llm, "human_applicable": human, "run_id": run, "model": model, "llm_answer": "readable"}
    out = report([row("old", "small", 0, 1), row("new", "large", 1, 1)])
    assert out["models"] == ["large", "small"]
    assert out["by_model"]["large"]["runs"] == ["new"]
    assert out["by_model"]["large"]["llm_vs_annotator"]["ann"]["overall"]["tp"] == 1
    assert out["by_model"]["small"]["llm_vs_annotator"]["ann"]["overall"]["fn"] == 1
