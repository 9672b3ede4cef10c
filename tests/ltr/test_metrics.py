"""NDCG@k: allRank parity, trec_eval (ir_measures) parity on a real run, and the conventions."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ltr.metrics import ndcg_at_k, ndcg_table

KS = (1, 3, 5, 10)


@pytest.mark.parametrize("filler, no_relevant", [("ndcg_filler1", "one"), ("ndcg_filler0", "zero")])
def test_matches_allrank_golden(golden, filler, no_relevant):
    for case in golden["cases"]:
        scores, labels = torch.tensor(case["y_pred"]), torch.tensor(case["y_true"])
        table = ndcg_table(scores, labels, KS, no_relevant=no_relevant)
        for k in KS:
            expected = torch.tensor(case[filler][str(k)])
            torch.testing.assert_close(table[k], expected, rtol=0, atol=1e-5, msg=f"case {case['case']} k={k}")


def test_matches_ir_measures_on_the_golden_inputs(golden):
    """trec_eval's nDCG@k (ir_measures: linear gain, queries without a relevant document score 0) on the
    allRank fixture's scores and labels, which the repository carries, so this runs without ../shared."""
    import ir_measures

    checked = 0
    for case in golden["cases"]:
        scores, labels = torch.tensor(case["y_pred"]), torch.tensor(case["y_true"])
        qrels, run = [], []
        for q in range(scores.shape[0]):
            for d in range(scores.shape[1]):
                if labels[q, d] >= 0:  # -1 is padding
                    qrels.append(ir_measures.Qrel(f"q{q}", f"d{d:03d}", int(labels[q, d])))
                    run.append(ir_measures.ScoredDoc(f"q{q}", f"d{d:03d}", float(scores[q, d])))
        ours = ndcg_table(scores.double(), labels, KS, gain="linear", no_relevant="zero")
        for k in KS:
            theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ k], qrels, run)}
            expected = torch.tensor([theirs[f"q{q}"] for q in range(scores.shape[0])], dtype=torch.float64)
            torch.testing.assert_close(ours[k], expected, rtol=0, atol=1e-6, msg=f"case {case['case']} nDCG@{k}")
            checked += len(theirs)
    assert checked > 0


def _mq2008_run(shared_dir):
    """(scores, labels) padded batches and ir_measures qrels/run from the real MQ2008 fold file."""
    from sklearn.datasets import load_svmlight_file

    path = shared_dir / "data" / "letor" / "mq2008_fold1_test.txt"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    X, y, qid = load_svmlight_file(str(path), query_id=True)
    X = X.toarray()
    # our scores: one real feature (column 25, BM25 of the whole document), ties included, which we
    # break by document order. trec_eval breaks ties by docno and reads scores as float32, so its run
    # gets that same order spelled out as distinct integers (n - position).
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    ends = np.r_[starts[1:], len(qid)]
    n = int((ends - starts).max())
    scores = np.zeros((len(starts), n))
    labels = -np.ones((len(starts), n))
    qrels, run = [], []
    for q, (a, b) in enumerate(zip(starts, ends)):
        feature = X[a:b, 24]
        scores[q, : b - a], labels[q, : b - a] = feature, y[a:b]
        position = np.empty(b - a, dtype=int)
        position[np.argsort(-feature, kind="stable")] = np.arange(b - a)
        for d in range(b - a):
            qrels.append((str(qid[a]), f"d{d}", int(y[a + d])))
            run.append((str(qid[a]), f"d{d}", float(b - a - position[d])))
    assert any(len(np.unique(scores[q, : b - a])) < b - a for q, (a, b) in enumerate(zip(starts, ends)))
    return torch.tensor(scores), torch.tensor(labels), qrels, run, [str(qid[a]) for a in starts]


def test_matches_ir_measures_on_real_run(shared_dir):
    import ir_measures

    scores, labels, qrels, run, qids = _mq2008_run(shared_dir)
    qrels = [ir_measures.Qrel(q, d, r) for q, d, r in qrels]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in run]
    ours = ndcg_table(scores, labels, KS, gain="linear", no_relevant="zero")
    assert (labels.clamp(min=0).sum(dim=1) == 0).any(), "the check must include queries without relevant docs"
    for k in KS:
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ k], qrels, run)}
        assert set(theirs) == set(qids)
        expected = torch.tensor([theirs[q] for q in qids], dtype=torch.float64)
        torch.testing.assert_close(ours[k], expected, rtol=0, atol=1e-6, msg=f"nDCG@{k}")


def test_formula_on_a_small_list():
    scores = torch.tensor([[0.1, 0.3, 0.2, 9.0]])
    labels = torch.tensor([[2.0, 0.0, 1.0, -1.0]])  # ranking: doc1 (0), doc2 (1), doc0 (2); doc3 padded
    dcg = 0 / math.log2(2) + 1 / math.log2(3) + 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(scores, labels, 3).item() == pytest.approx(dcg / idcg, abs=1e-6)
    lin_dcg, lin_idcg = 1 / math.log2(3) + 2 / math.log2(4), 2 + 1 / math.log2(3)
    assert ndcg_at_k(scores, labels, 3, gain="linear").item() == pytest.approx(lin_dcg / lin_idcg, abs=1e-6)
    assert ndcg_at_k(scores, labels, 1).item() == 0.0
    # k beyond the list counts the whole list; the padded document never counts
    assert ndcg_at_k(scores, labels, 50).item() == pytest.approx(dcg / idcg, abs=1e-6)


def test_ties_are_broken_by_document_order():
    scores = torch.zeros(2, 3)
    labels = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert ndcg_at_k(scores, labels, 1).tolist() == [1.0, 0.0]
    # a real document scored -inf still ranks before padding
    assert ndcg_at_k(torch.tensor([[float("-inf"), 5.0]]), torch.tensor([[1.0, -1.0]]), 1).item() == 1.0


def test_no_relevant_conventions():
    scores = torch.tensor([[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]])
    labels = torch.tensor([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])
    one = ndcg_at_k(scores, labels, 3, no_relevant="one")
    zero = ndcg_at_k(scores, labels, 3, no_relevant="zero")
    excluded = ndcg_at_k(scores, labels, 3, no_relevant="exclude")
    assert one[0].item() == 1.0 and zero[0].item() == 0.0 and math.isnan(excluded[0].item())
    assert one[1].item() == zero[1].item() == excluded[1].item() == pytest.approx(0.5)


def test_padding_does_not_change_results():
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(5, 12, generator=gen)
    labels = torch.randint(0, 5, (5, 12), generator=gen).float()
    padded_scores = torch.cat([scores, torch.randn(5, 7, generator=gen) * 100], dim=1)
    padded_labels = torch.cat([labels, -torch.ones(5, 7)], dim=1)
    for k in KS:
        torch.testing.assert_close(ndcg_at_k(scores, labels, k), ndcg_at_k(padded_scores, padded_labels, k))


def test_bad_arguments_are_rejected():
    scores, labels = torch.zeros(1, 2), torch.zeros(1, 2)
    with pytest.raises(ValueError, match="gain"):
        ndcg_at_k(scores, labels, 1, gain="cubic")
    with pytest.raises(ValueError, match="no_relevant"):
        ndcg_at_k(scores, labels, 1, no_relevant="maybe")
    with pytest.raises(ValueError, match="ks"):
        ndcg_at_k(scores, labels, 0)
    with pytest.raises(ValueError, match=r"\[B, n\]"):
        ndcg_at_k(scores, labels[0], 1)
