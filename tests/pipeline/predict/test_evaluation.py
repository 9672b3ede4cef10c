"""The evaluation table: τ-b, r and AUC against scipy and scikit-learn (point values and the vectorised
resampled ones), AUC's orientation, Holm on a hand case, seeded bootstrap, the pooled stratum rows."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from core.multiple_testing import holm_adjust
from pipeline.predict import evaluation as ev


def sample(n=40, seed=1, ties=True):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    if ties:
        x, y = np.round(x, 1), np.round(y, 1)
    return x, y


def test_vectorised_statistics_equal_scipy_and_sklearn_on_resamples():
    x, y = sample()
    easy = y > np.quantile(y, 0.25)
    idx = ev.resample_indices(np.zeros(len(x)), 30, np.random.default_rng(3))  # resamples hold duplicates
    counts = ev.resample_counts(idx, len(x))
    assert (counts.sum(axis=1) == len(x)).all() and counts[0, idx[0, 0]] == (idx[0] == idx[0, 0]).sum()
    taus, rs, aucs = ev.kendall_tau_b(x, y, counts), ev.pearson_r(x, y, counts), ev.easy_auc(x, easy, counts)
    for b, rows in enumerate(idx):
        assert taus[b] == pytest.approx(stats.kendalltau(x[rows], y[rows], variant="b").statistic, abs=1e-12)
        assert rs[b] == pytest.approx(stats.pearsonr(x[rows], y[rows]).statistic, abs=1e-12)
        assert aucs[b] == pytest.approx(roc_auc_score(easy[rows], x[rows]), abs=1e-12)


def target(values, hard, *, higher_is_easier=True, dataset="d", name="t"):
    return ev.Target(name, "h2r", dataset, values, higher_is_easier, frozenset(hard))


def test_a_row_equals_scipy_and_sklearn_and_auc_reads_easier():
    x, y = sample(ties=False)
    qids = [f"q{i}" for i in range(len(x))]
    hard = {q for q, v in zip(qids, y) if v <= np.quantile(y, 0.25)}
    row = ev.evaluate_pair(dict(zip(qids, x)), target(dict(zip(qids, y)), hard), name="p", family="f", n_boot=200)
    assert row.n == 40 and row.n_hard == len(hard)
    assert row.kendall_tau == pytest.approx(stats.kendalltau(x, y).statistic)
    assert row.kendall_p == pytest.approx(stats.kendalltau(x, y).pvalue)
    assert row.pearson_r == pytest.approx(stats.pearsonr(x, y).statistic)
    easy = np.array([q not in hard for q in qids])
    assert row.auc == pytest.approx(roc_auc_score(easy, x))
    assert row.auc > 0.5  # x rises with y: a higher predictor value marks an easier query
    lo, hi = row.intervals["kendall_tau"]
    assert lo < row.kendall_tau < hi
    again = ev.evaluate_pair(dict(zip(qids, x)), target(dict(zip(qids, y)), hard), name="p", family="f", n_boot=200)
    assert again.intervals == row.intervals  # seeded


def test_a_harder_is_higher_target_flips_tau_easier_not_tau():
    x, y = sample(ties=False)
    qids = [f"q{i}" for i in range(len(x))]
    hard = {q for q, v in zip(qids, y) if v >= np.quantile(y, 0.75)}  # disagreement: highest is hardest
    row = ev.evaluate_pair(dict(zip(qids, x)), target(dict(zip(qids, y)), hard, higher_is_easier=False),
                           name="p", family="f", n_boot=50)
    assert row.kendall_tau > 0 and row.tau_easier == -row.kendall_tau
    assert row.auc < 0.5  # higher x goes with higher disagreement, i.e. harder


def test_only_queries_with_both_values_count():
    row = ev.evaluate_pair({"a": 1.0, "b": 2.0}, target({"a": 1.0, "b": 2.0, "c": 3.0}, {"a"}), name="p", family="f")
    assert row.n == 2 and row.kendall_tau is None and "fewer than" in row.note


def test_holm_on_a_hand_case_across_the_table():
    rows = [ev.Row("d", f"p{i}", "f", "t", "h2r", 10, 2, kendall_p=p, pearson_p=p) for i, p in
            enumerate([0.04, 0.01, 0.03, None])]
    ev.holm_table(rows)
    # sorted 0.01, 0.03, 0.04 with m = 3: 0.03, max(0.06, 0.03), max(0.04, 0.06)
    assert [r.kendall_p_holm for r in rows] == pytest.approx([0.06, 0.03, 0.06, None])
    assert holm_adjust([0.5, np.nan]).tolist()[0] == 0.5


def test_stratified_resampling_stays_within_each_dataset():
    strata = np.array(["a"] * 5 + ["b"] * 3)
    idx = ev.resample_indices(strata, 100, np.random.default_rng(0))
    assert (idx[:, :5] < 5).all() and (idx[:, 5:] >= 5).all()


def test_pooled_row_weights_datasets_by_n_and_combines_p_values():
    predictors, targets = {}, {}
    for dataset, n, seed in (("dl19", 43, 1), ("dl20", 54, 2)):
        x, y = sample(n, seed, ties=False)
        qids = [f"{dataset}-{i}" for i in range(n)]
        hard = {q for q, v in zip(qids, y) if v <= np.quantile(y, 0.25)}
        predictors[dataset] = {"p": SimpleNamespace(values=dict(zip(qids, x)), family="f", partial=True)}
        targets[dataset] = [target(dict(zip(qids, y)), hard, dataset=dataset, name="nDCG@10[bm25]")]
    rows = ev.evaluate(predictors, targets, n_boot=100)
    by = {r.dataset: r for r in rows}
    pooled = by[ev.POOLED]
    assert pooled.n == 97 and pooled.partial
    assert pooled.kendall_tau == pytest.approx((43 * by["dl19"].kendall_tau + 54 * by["dl20"].kendall_tau) / 97)
    assert pooled.kendall_p < max(by["dl19"].kendall_p, by["dl20"].kendall_p)  # two agreeing datasets
    assert pooled.intervals["kendall_tau"][0] < pooled.kendall_tau < pooled.intervals["kendall_tau"][1]
    assert all(r.kendall_p_holm >= r.kendall_p for r in rows)
