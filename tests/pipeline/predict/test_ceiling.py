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


def planted_result(generator="g", quantile=0.2, encoder="minilm") -> dict:
    """Two samples of five queries, sample 1 = sample 0 with a and b swapped, H2G the lowest one of each:
    each sample predicts the other with τ = (9 - 1) / 10 = 0.8 (one discordant pair of ten), AUC = 3/4 (the
    hard query a, or b, scores below 3 of the 4 easy ones) and sMARE = (1/5 + 1/5) / 5 = 0.08."""
    values = {"0": {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4, "e": 0.5},
              "1": {"a": 0.2, "b": 0.1, "c": 0.3, "d": 0.4, "e": 0.5}}
    return {"kind": "h2g-samples", "version": 1, "id": f"{generator}-{quantile}-{encoder}", "dataset": "dl19",
            "generator": generator, "samples": [0, 1], "quantile": quantile, "samples_file": "/x/samples.jsonl",
            "bertscore": {"encoder": encoder, "label": "MiniLM layer 5", "aggregate": "max"},
            "values": values, "sets": {"0": ["a"], "1": ["b"]}}


def test_a_stored_result_gives_the_ceiling_of_its_generator_scored_as_the_target(tmp_path, monkeypatch):
    from core.result_files import save_result
    from pipeline.predict.ceiling import MEANING, ceiling_text, stored_ceiling

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    scoring = {"encoder": "minilm", "label": "MiniLM layer 5", "aggregate": "max", "n_answered": 5}
    assert stored_ceiling("dl19", "g", scoring, 0.2) is None  # nothing stored: no ceiling, no line
    save_result("h2g-samples", planted_result())
    found = stored_ceiling("dl19", "g", scoring, 0.2)
    assert found["available"] and found["n_samples"] == 2 and found["meaning"] == MEANING
    assert found["kendall_tau"] == {"n": 2, "mean": pytest.approx(0.8), "min": pytest.approx(0.8),
                                    "max": pytest.approx(0.8)}
    assert found["auc"]["mean"] == pytest.approx(0.75) and found["smare"]["mean"] == pytest.approx(0.08)
    line = ceiling_text("BERTScore F1[g]", found)
    assert "sampling ceiling τ +0.800 (range +0.800–+0.800), AUC 0.750" in line and line.endswith(MEANING)
    assert stored_ceiling("dl19", "other", scoring, 0.2) is None  # another generator's samples bear on nothing
    other = stored_ceiling("dl19", "g", scoring, 0.25)  # scored with another hard-set rule: said, not used
    assert not other["available"] and "quantile 0.2 (this target: 0.25)" in other["reason"]
    other = stored_ceiling("dl19", "g", {**scoring, "encoder": "roberta-large"}, 0.2)
    assert "encoder 'minilm' (this target: 'roberta-large')" in other["reason"]
    assert "no sampling ceiling" in ceiling_text("BERTScore F1[g]", other)


def test_the_exports_predictor_definitions_state_the_ceiling():
    from pipeline.export.predictors import definitions
    from pipeline.predict.ceiling import MEANING

    result = planted_result()
    found = {"available": True, "result": result["id"], "dataset": "dl19", "n_samples": 2,
             **sampling_ceiling(result["values"], result["sets"])}
    terms = definitions({"h2g_ceiling": {"dl19": {"BERTScore F1[g]": found}}}, "dl19")
    assert "sampling ceiling τ +0.800" in terms["ceiling BERTScore F1[g]"] and MEANING in terms["ceiling BERTScore F1[g]"]
    assert not any(k.startswith("ceiling") for k in definitions({"h2g_ceiling": {}}, "dl19"))


def test_a_stored_dl19_samples_result_gives_the_benchs_ceiling():
    """Real data, only where a stored h2g-samples result of text-davinci-003's DL19 samples scored with MiniLM
    exists (``python -m pipeline h2g-samples --dataset dl19 --samples text-davinci-003 --encoder minilm``, minutes):
    the ceiling ``predict`` reports from it equals the one the bench note measured from the same samples scored
    as separate generators (bench/results/qpp_h2g_dl19.json)."""
    import json
    from pathlib import Path

    from pipeline.predict.ceiling import stored_ceiling
    from pipeline.study.sampling import stored_spreads

    found = [r for r in stored_spreads("dl19") if r["generator"] == "text-davinci-003"
             and "minilm" in str((r.get("bertscore") or {}).get("encoder", "")).lower() and r["quantile"] == 0.25]
    if not found:
        pytest.skip("no stored h2g-samples result of text-davinci-003 on dl19 with MiniLM (it takes minutes)")
    bench = json.loads((Path(__file__).resolve().parents[3] / "bench/results/qpp_h2g_dl19.json").read_text())
    ceiling = stored_ceiling("dl19", "text-davinci-003", found[0]["bertscore"], 0.25)
    assert ceiling["available"] and ceiling["n_samples"] == 8
    for key in ("kendall_tau", "auc", "smare"):
        assert ceiling[key] == pytest.approx(bench["ceiling"][key], abs=1e-6)
