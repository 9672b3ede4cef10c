"""Seeds as a random effect (issue 41): the fold-level test, the hierarchical bootstrap over queries and seeds, and
the top group."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ltr.report.paired import configuration_runs, per_query_frame, significance_table
from ltr.report.seeds import bootstrap_test, fold_level_test, run_means, seed_tests, table_mean, top_group
from tests.ltr.report.support import DATA, MODEL


@pytest.fixture
def frame(small_store):
    store, _ = small_store
    runs, _, _ = configuration_runs(store, DATA, MODEL)
    return per_query_frame(store, runs), significance_table(store, DATA, MODEL, holm=True).set_index("loss")


def test_the_fold_level_test_pairs_the_folds_means_over_seeds(frame):
    per_query, table = frame
    runs = run_means(per_query, 10)
    fold_means = {loss: [per_query[(per_query["variant"] == loss) & (per_query["fold"] == f)]["ndcg@10"].mean()
                         for f in range(1, 6)] for loss in ("learndcg", "ranknet")}
    expected = stats.ttest_rel(fold_means["learndcg"], fold_means["ranknet"])
    result = fold_level_test(runs, "learndcg", "ranknet", 10)
    assert result["folds"] == 5 and result["p"] == pytest.approx(expected.pvalue, rel=1e-12)
    assert result["diff"] == pytest.approx(np.mean(fold_means["learndcg"]) - np.mean(fold_means["ranknet"]))
    assert table_mean(runs, "learndcg", 10) == pytest.approx(table.loc["learndcg", "ndcg@10"], rel=1e-12)


def test_the_bootstrap_counts_the_seeds_as_random_where_the_seed_averaged_test_does_not(frame):
    """neuralloss differs from learndcg only through its runs' large seed-to-seed shifts: the seed-averaged paired
    test, which treats the seeds as fixed, calls the lead significant; the bootstrap over queries and seeds does
    not. ranknet trails at every seed: both call it."""
    per_query, table = frame
    assert table.loc["neuralloss", "p@10"] < 0.05
    seeded = bootstrap_test(per_query, "learndcg", "neuralloss", 10)
    assert seeded["diff"] == pytest.approx(table.loc["neuralloss", "diff@10"], rel=1e-12)  # the same lead
    assert seeded["p"] >= 0.05 and seeded["ci"][0] < 0 < seeded["ci"][1]
    consistent = bootstrap_test(per_query, "learndcg", "ranknet", 10)
    assert consistent["p"] < 0.05 and consistent["ci"][0] > 0
    assert bootstrap_test(per_query, "learndcg", "neuralloss", 10) == seeded  # a fixed generator seed


def test_seed_tests_holm_across_the_baselines(frame):
    per_query, _ = frame
    tests = seed_tests(per_query, "learndcg", (10,)).set_index("loss")
    raw = tests["boot_p@10"].to_numpy()
    order = np.argsort(raw)
    expected = np.maximum.accumulate(np.minimum(1, raw[order] * np.arange(len(raw), 0, -1)))
    assert tests["boot_p_holm@10"].to_numpy()[order] == pytest.approx(expected)
    assert tests["fold_p_holm@10"].notna().all()
    alone = seed_tests(per_query, "learndcg", (10,), runs=run_means(per_query, 10)).set_index("loss")
    assert "boot_p@10" not in alone and alone["fold_p@10"].tolist() == tests["fold_p@10"].tolist()


def test_the_top_group_keeps_what_is_not_significantly_below_the_best_after_holm():
    means = {"a": 0.78, "b": 0.781, "c": 0.77, "d": 0.70}
    raw = {"a": 0.04, "c": 0.03, "d": 0.0001}  # b is the best; a and c are below it before Holm, not after
    group = top_group(means, lambda best, other: raw[other])
    assert group["best"] == "b" and group["members"] == ["a", "b", "c"]
    assert group["p_holm"]["d"] == pytest.approx(0.0003) and group["p_holm"]["a"] == pytest.approx(0.06)
    strict = top_group(means, lambda best, other: raw[other] / 10)
    assert strict["members"] == ["b"]
    assert top_group({}, lambda *_: 1.0)["members"] == []
