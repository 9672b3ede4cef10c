"""One Cohen's kappa for the whole pipeline (pipeline.stats.agreement), against sklearn's, and both of its users
(the annotation validation and the judge benchmark) giving the same answer for the same raters."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from pipeline.annotation.validation import kappa_figures
from pipeline.judging.benchmark import agreement
from pipeline.stats.agreement import KAPPA_UNDEFINED, cohen_kappa, cohen_kappa_counts

RATERS = [
    ([1, 0, 0, 0, 1, 0], [1, 1, 0, 1, 1, 0]),  # 0.4 by hand (tests/pipeline/annotation/test_validation.py)
    ([0, 0, 0, 0], [0, 1, 0, 1]),  # one rater constant, the other not: 0, defined
    ([1, 1, 1], [0, 0, 0]),  # both constant, different answers: p_e = 0, kappa 0
    ([1, 1, 1, 1], [1, 1, 1, 1]),  # both constant, the same answer: p_e = 1, undefined (sklearn: nan)
    ([0, 0], [0, 0]),
    ([True, False, True], [np.True_, np.False_, np.False_]),
]


def sklearn_kappa(a, b) -> float:
    with warnings.catch_warnings():  # sklearn warns on the degenerate case: the test wants its value (nan)
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(a, b))


@pytest.mark.parametrize("a,b", RATERS)
def test_cohen_kappa_is_sklearns_and_none_where_sklearn_says_nan(a, b):
    reference = sklearn_kappa(a, b)
    ours = cohen_kappa(a, b)
    if math.isnan(reference):
        assert ours is None
    else:
        assert ours == pytest.approx(reference)


@pytest.mark.parametrize("a,b", RATERS[:5])
def test_kappa_from_confusion_counts_is_the_same_kappa(a, b):
    """cohen_kappa_counts (the aware-judge bootstrap's κ over summed counts) gives cohen_kappa's value, NaN
    where it gives None; over a stack of count matrices, each one's."""
    counts = np.zeros((2, 2))
    for x, y in zip(a, b):
        counts[int(x), int(y)] += 1
    ours = cohen_kappa(a, b)
    stacked = cohen_kappa_counts(np.stack([counts, counts, np.zeros((2, 2))]))
    if ours is None:
        assert np.isnan(stacked[0])
    else:
        assert stacked[0] == pytest.approx(ours, abs=1e-12) and stacked[1] == stacked[0]
    assert np.isnan(stacked[2])  # no items: undefined


def test_random_raters_agree_with_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 12))
        a, b = rng.integers(0, 2, n).tolist(), rng.integers(0, 2, n).tolist()
        reference = sklearn_kappa(a, b)
        assert (cohen_kappa(a, b) is None) if math.isnan(reference) else cohen_kappa(a, b) == pytest.approx(reference)


def test_no_items_and_unequal_lengths():
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="3 answers against 2"):
        cohen_kappa([0, 1, 0], [0, 1])


def test_the_benchmark_and_the_validation_give_one_answer_for_constant_raters():
    """Issue 30 item 6: the judge benchmark said kappa 0.0 where the validation said "undefined" for the same
    raters (NIST and the judge both calling every pair relevant)."""
    pairs = [("q", f"p{i}") for i in range(4)]
    nist = dict(zip(pairs, [2, 3, 3, 2]))
    fig = agreement(pairs, nist, dict(zip(pairs, [2, 2, 3, 3])))  # binary: both say relevant to all four
    validation = kappa_figures([(p, 1, 1) for p in pairs])
    assert validation["kappa"] is None and fig["kappa"] is None
    assert fig["kappa_undefined"] == validation["undefined"] == KAPPA_UNDEFINED
    assert fig["binary_agreement"] == 1.0
