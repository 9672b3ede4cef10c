"""Per-query effectiveness through ir_measures, with trec_eval's conventions; reference means on real runs."""
from __future__ import annotations

import math

import pytest

from pipeline.retrieval import evaluation
from pipeline.data import trec_io
from pipeline.data.datasets import load_dataset


def test_ndcg_uses_linear_gain_and_trec_eval_tie_order():
    qrels = {"q": {"a": 3, "b": 0, "c": 1}}
    run = {"q": {"b": 2.0, "a": 1.0, "c": 1.0}}  # a and c tie: trec_eval ranks c (larger docno) first
    dcg = 0 / math.log2(2) + 1 / math.log2(3) + 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert evaluation.per_query(qrels, run)["q"] == pytest.approx(dcg / idcg, abs=1e-9)


def test_missing_queries_and_other_measures():
    qrels = {"1": {"a": 2, "b": 1}, "2": {"c": 3}}
    run = {"1": {"b": 2.0, "a": 1.0}, "3": {"z": 1.0}}  # query 2 not retrieved, query 3 not judged
    assert set(evaluation.per_query(qrels, run)) == {"1"}
    complete = evaluation.per_query(qrels, run, complete=True)
    assert set(complete) == {"1", "2"} and complete["2"] == 0.0
    both = evaluation.evaluate(qrels, run, ["RR(rel=2)@10", "P(rel=1)@2"])
    assert both["RR(rel=2)@10"]["1"] == pytest.approx(0.5)  # first grade>=2 passage at rank 2
    assert both["P(rel=1)@2"]["1"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown measure 'nDCG@ten'"):
        evaluation.per_query(qrels, run, "nDCG@ten")


def test_run_for_another_dataset_is_refused():
    qrels = {str(i): {"a": 1} for i in range(10)}
    with pytest.raises(ValueError, match="only 2 of the 10 judged queries"):
        evaluation.check_run_matches_qrels(qrels, {"0": {"a": 1.0}, "1": {"a": 1.0}, "99": {"a": 1.0}}, "r", "q")
    evaluation.check_run_matches_qrels(qrels, {str(i): {"a": 1.0} for i in range(5)}, "r", "q")


@pytest.mark.parametrize("dataset, retriever, expected", [
    ("dl19", "bm25", 0.5058), ("dl20", "bm25", 0.4796), ("dl19", "tasb", 0.7210), ("dl20", "tasb", 0.6854)])
def test_reference_means_of_shared_runs(shared_dir, dataset, retriever, expected):
    data = load_dataset(dataset, shared_dir / "data" / "trec_dl")
    run = data.load_run(data.imported_runs()[retriever])
    values = evaluation.per_query(data.require_qrels(), run, complete=True)
    assert set(values) == set(data.judged_qids)
    assert round(evaluation.mean(values), 4) == expected
    # the complete (-c) and default conventions agree here: every judged query is in the run
    assert values == evaluation.per_query(data.qrels, run)


def test_shared_run_checked_against_its_dataset(shared_dir):
    dl19 = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    with pytest.raises(trec_io.TrecFormatError, match="run.bm25.dl20.txt:1: .*another dataset"):
        dl19.load_run(shared_dir / "data" / "trec_dl" / "runs" / "run.bm25.dl20.txt")
