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


def test_the_h2g_bench_note_reads_the_samples_and_the_ceiling_from_a_stored_prediction():
    import sys
    from pathlib import Path

    bench = str(Path(__file__).resolve().parents[3] / "bench")
    sys.path.insert(0, bench)
    try:
        from qpp_h2g_dl19 import render
    finally:
        sys.path.remove(bench)
    queries = [f"q{i}" for i in range(10)]
    targets = {f"BERTScore F1[g-s{s}]": {"values": {q: i / 10 + s / 100 for i, q in enumerate(queries)},
                                          "hard": queries[:2], "provenance": {"label": "minilm"}} for s in range(2)}
    targets["BERTScore F1[other]"] = {"values": {q: 0.5 for q in queries}, "hard": [], "provenance": {}}
    rows = [{"dataset": "dl19", "task": "h2g", "predictor": "sd@100[bm25]", "target": name, "n": 10, "pool": False,
             "tau_easier": 0.5 + k / 10, "auc": 0.7, "smare": 0.2, "intervals": {"kendall_tau": [0.1, 0.8]}}
            for k, name in enumerate(targets)]
    doc = {"id": "r", "targets": {"dl19": targets}, "evaluation": rows,
           "provenance": {"bootstrap": {"n_boot": 100, "seed": 0}}, "absent": []}
    note, record = render(doc, "g", "other")
    assert record["ceiling"]["kendall_tau"]["mean"] == pytest.approx(1.0)  # the two samples order queries alike
    entry = record["table"][0]
    assert entry["tau_samples"] == {"mean": pytest.approx(0.55), "min": 0.5, "max": 0.6} and entry["tau_other"] == 0.7
    assert "| sd@100[bm25] |  | +0.500 [+0.10, +0.80] | 0.200 | +0.550 (+0.500 to +0.600) | 0.700 | +0.700 |" in note
