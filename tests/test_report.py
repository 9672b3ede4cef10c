"""The cross-validation report: fold means, pooled paired t-tests, Holm, exports, CLI."""
from __future__ import annotations

import json
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ltr.losses import LOSS_NAMES
from ltr.report import BETTER_MARK, WORSE_MARK, ReportError, holm_adjust, significance_table, to_csv, to_latex
from ltr.store import RunStore

DATA, MODEL, FOLDS, PER_FOLD = "synthetic-mq2008", "mlp", range(1, 6), 30


def _store_run(store, loss, fold, values: dict[str, float], *, seed=0, run_id=None):
    run_id = run_id or f"{loss}-{fold}-{seed}"
    store.register_run(run_id, {"data": DATA, "fold": fold, "loss": loss, "model": MODEL, "seed": seed})
    store.start_run(run_id, device="cpu")
    per_query = {f"ndcg@{k}": {q: min(1.0, v * (1 + k / 100)) for q, v in values.items()} for k in (1, 3, 5, 10)}
    means = {m: float(np.mean(list(pq.values()))) for m, pq in per_query.items()}
    store.finish_run(run_id, test_means=means, per_query=per_query, train_seconds=1.0)
    return per_query


@pytest.fixture
def study(tmp_path):
    """learndcg clearly better than approxndcg, indistinguishable from listnet, worse than ranknet."""
    rng = np.random.default_rng(0)
    pooled = {loss: [] for loss in ("learndcg", "approxndcg", "listnet", "ranknet")}
    fold_means = {loss: [] for loss in pooled}
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold in FOLDS:
            base = rng.uniform(0.2, 0.7, PER_FOLD)
            qids = [f"{fold}_{i}" for i in range(PER_FOLD)]
            cand = base + 0.05
            series = {"learndcg": cand, "approxndcg": base + rng.normal(0, 0.01, PER_FOLD),
                      "listnet": cand + rng.normal(0, 0.02, PER_FOLD), "ranknet": cand + 0.1 + rng.normal(0, 0.01, PER_FOLD)}
            for loss, values in series.items():
                pq = _store_run(store, loss, fold, dict(zip(qids, values)))["ndcg@10"]
                pooled[loss].extend(pq[q] for q in qids)
                fold_means[loss].append(np.mean(list(pq.values())))
        yield store, pooled, fold_means


def test_table_means_and_pooled_paired_tests(study):
    store, pooled, fold_means = study
    table = significance_table(store, DATA, MODEL).set_index("loss")
    assert list(table.index) == [n for n in LOSS_NAMES if n in pooled]  # the study's loss order
    assert (table["folds"] == 5).all() and (table["queries"] == 5 * PER_FOLD).all()
    for loss in pooled:
        assert table.loc[loss, "ndcg@10"] == pytest.approx(np.mean(fold_means[loss]))
    for loss in ("approxndcg", "listnet", "ranknet"):
        expected = stats.ttest_rel(pooled["learndcg"], pooled[loss]).pvalue
        assert table.loc[loss, "p@10"] == pytest.approx(expected, rel=1e-9)
        assert table.loc[loss, "diff@10"] == pytest.approx(np.mean(pooled["learndcg"]) - np.mean(pooled[loss]))
    assert table.loc["approxndcg", "better@10"] and not table.loc["approxndcg", "worse@10"]
    assert not table.loc["listnet", "better@10"] and not table.loc["listnet", "worse@10"]
    assert table.loc["ranknet", "worse@10"]
    assert np.isnan(table.loc["learndcg", "p@10"])


def test_holm_adjustment():
    # Textbook example: sorted p (0.01, 0.03, 0.04) x (3, 2, 1) = (0.03, 0.06, 0.04) -> monotone (0.03, 0.06, 0.06).
    assert holm_adjust([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    adjusted = holm_adjust([0.5, np.nan, 0.9])
    assert adjusted[0] == pytest.approx(1.0) and np.isnan(adjusted[1]) and adjusted[2] == pytest.approx(1.0)


def test_holm_column_and_latest_run_wins(study):
    store, _, _ = study
    plain = significance_table(store, DATA, MODEL).set_index("loss")
    corrected = significance_table(store, DATA, MODEL, holm=True).set_index("loss")
    baselines = ["listnet", "ranknet", "approxndcg"]
    assert corrected.loc[baselines, "p_holm@5"].tolist() == pytest.approx(
        holm_adjust(plain.loc[baselines, "p@5"].to_numpy()).tolist())
    # A second, later fold-1 run of ranknet (another seed) replaces the first in the table.
    _store_run(store, "ranknet", 1, {f"1_{i}": 0.0 for i in range(PER_FOLD)}, seed=1)
    table = significance_table(store, DATA, MODEL)
    assert table.attrs["left_out"] == 1
    assert table.set_index("loss").loc["ranknet", "ndcg@10"] < plain.loc["ranknet", "ndcg@10"]
    seed0 = significance_table(store, DATA, MODEL, seed=0).set_index("loss")
    assert seed0.loc["ranknet", "ndcg@10"] == pytest.approx(plain.loc["ranknet", "ndcg@10"])


def test_exports(study, tmp_path):
    store, _, _ = study
    table = significance_table(store, DATA, MODEL)
    to_csv(table, tmp_path / "t.csv")
    back = pd.read_csv(tmp_path / "t.csv")
    assert back["p@10"].tolist() == pytest.approx(table["p@10"].tolist(), nan_ok=True)
    latex = to_latex(table, tmp_path / "t.tex")
    assert (tmp_path / "t.tex").read_text() == latex
    assert r"\toprule" in latex and r"$^\dagger$" in latex and r"$^\ddagger$" in latex
    approx_line = next(line for line in latex.splitlines() if line.startswith("approxndcg"))
    assert r"$^\dagger$" in approx_line and r"\textbf" not in approx_line


def test_missing_runs_is_a_clear_error(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as store, pytest.raises(ReportError, match="no completed runs"):
        significance_table(store, DATA, "attsets")


def test_report_cli(study, tmp_path, capsys):
    from ltr.cli import main

    store, _, _ = study
    argv = ["report", "--data", DATA, "--model", MODEL, "--store", str(store.path), "--holm"]
    assert main(argv + ["--csv", str(tmp_path / "r.csv"), "--latex", str(tmp_path / "r.tex")]) == 0
    out = capsys.readouterr().out
    assert "approxndcg" in out and BETTER_MARK in out and WORSE_MARK in out and "Holm-corrected" in out
    assert "p_holm@10" in pd.read_csv(tmp_path / "r.csv").columns and (tmp_path / "r.tex").is_file()
    assert main(argv + ["--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert {r["loss"] for r in records} == {"learndcg", "approxndcg", "listnet", "ranknet"}
    assert main(["report", "--data", "synthetic-mq2007", "--store", str(store.path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.splitlines()) == 1


@pytest.mark.parametrize("losses", [["learndcg"], ["listnet", "approxndcg"]])
def test_a_table_with_nothing_to_test_has_means_and_no_tests(tmp_path, losses):
    """Only the candidate (or only baselines) stored: means per loss, no p-values, exports still work."""
    from ltr.views import significance_display, significance_legend

    with RunStore(tmp_path / "runs.sqlite") as store:
        for loss in losses:
            for fold in FOLDS:
                _store_run(store, loss, fold, {f"{fold}_{i}": 0.1 * i for i in range(5)})
        table = significance_table(store, DATA, MODEL, holm=True)
    assert list(table["loss"]) == losses
    assert not [c for c in table.columns if c.startswith(("p@", "better@"))]
    assert table["ndcg@10"].notna().all()
    assert "Nothing to test yet" in significance_legend(table)
    assert list(significance_display(table, show_p=True).index) == losses
    to_csv(table, tmp_path / "t.csv")
    assert "ndcg@10" in (tmp_path / "t.csv").read_text()
    assert to_latex(table)


def test_an_unknown_candidate_is_an_error(study):
    store, _, _ = study
    with pytest.raises(ReportError, match="unknown candidate loss 'learndgc'"):
        significance_table(store, DATA, MODEL, candidate="learndgc")
