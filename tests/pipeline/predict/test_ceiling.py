"""The sampling ceiling of H2G prediction: leave one sample out, scored as every predictor is."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pipeline.predict.ceiling import leave_one_out, sampling_ceiling


def test_samples_that_agree_give_a_ceiling_of_one_and_noise_lowers_it():
    queries = [f"q{i}" for i in range(20)]
    base = {q: i / 20 for i, q in enumerate(queries)}
    same = {s: dict(base) for s in range(4)}
    sets = {s: queries[:5] for s in range(4)}
    ceiling = sampling_ceiling(same, sets)
    assert ceiling["kendall_tau"]["mean"] == pytest.approx(1.0) and ceiling["auc"]["mean"] == 1.0
    assert ceiling["smare"]["mean"] == 0.0 and ceiling["kendall_tau"]["n"] == 4
    rng = np.random.default_rng(1)
    noisy = {s: {q: v + rng.normal(0, 0.3) for q, v in base.items()} for s in range(4)}
    noisy_sets = {s: sorted(noisy[s], key=noisy[s].get)[:5] for s in noisy}
    lower = sampling_ceiling(noisy, noisy_sets)
    assert lower["kendall_tau"]["mean"] < 0.9 and lower["smare"]["mean"] > 0.0


def test_each_row_is_the_other_samples_mean_against_one_sample():
    values = {0: {"a": 0.1, "b": 0.5, "c": 0.3, "d": 0.9, "e": 0.7},
              1: {"a": 0.2, "b": 0.4, "c": 0.6, "d": 0.8, "e": 0.5},
              2: {"a": 0.3, "b": 0.5, "c": 0.2, "d": 0.7, "e": 0.9}}
    rows = {r["sample"]: r for r in leave_one_out(values, {0: ["a"], 1: ["a"], 2: ["b"]})}
    mean_12 = [(values[1][q] + values[2][q]) / 2 for q in "abcde"]
    assert rows["0"]["kendall_tau"] == pytest.approx(stats.kendalltau(mean_12, [values[0][q] for q in "abcde"]).statistic)
    assert rows["0"]["auc"] == 1.0  # "a" has the lowest mean of the others and is sample 0's only hard query
    with pytest.raises(ValueError, match="at least 2 samples"):
        sampling_ceiling({0: values[0]}, {0: []})
