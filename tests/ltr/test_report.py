"""The cross-validation report: fold means, pooled paired t-tests, Holm, exports, CLI."""
from __future__ import annotations

import json
import warnings
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ltr.losses import LOSS_NAMES
from ltr.report import text as report_text
from core.multiple_testing import holm_adjust
from ltr.report.paired import significance_table
from ltr.report.runs import ReportError
from ltr.report.text import BETTER_MARK, WORSE_MARK, fold_seed_table, table_notes, to_csv, to_latex
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


def test_holm_column_and_another_seed_joins_the_configuration(study):
    store, _, fold_means = study
    plain = significance_table(store, DATA, MODEL).set_index("loss")
    corrected = significance_table(store, DATA, MODEL, holm=True).set_index("loss")
    baselines = ["listnet", "ranknet", "approxndcg"]
    assert corrected.loc[baselines, "p_holm@5"].tolist() == pytest.approx(
        holm_adjust(plain.loc[baselines, "p@5"].to_numpy()).tolist())
    # A fold-1 run of ranknet with another seed is the same configuration (seeds are a dimension of the
    # study): fold 1's ranknet value becomes the mean of its two seeds, and the missing seeds are named.
    _store_run(store, "ranknet", 1, {f"1_{i}": 0.0 for i in range(PER_FOLD)}, seed=1)
    table = significance_table(store, DATA, MODEL)
    assert table.attrs["other_configurations"] == [] and "seeds=0,1" in table.attrs["configuration"]
    expected = np.mean([fold_means["ranknet"][0] / 2, *fold_means["ranknet"][1:]])
    assert table.set_index("loss").loc["ranknet", "ndcg@10"] == pytest.approx(expected)
    assert table.attrs["missing_seeds"]["ranknet"] == {f: [1] for f in (2, 3, 4, 5)}
    assert any("ranknet lacks fold 2: seed(s) 1" in n for n in table_notes(table))
    seed0 = significance_table(store, DATA, MODEL, seed=0).set_index("loss")
    assert seed0.loc["ranknet", "ndcg@10"] == pytest.approx(plain.loc["ranknet", "ndcg@10"])
    assert "seed=0" in seed0.attrs["configuration"]


def _store_full_run(store, loss, fold, lr, values, *, loss_params=None, loss_lr=None, n_relevant=None):
    from ltr.train import RunConfig

    cfg = RunConfig(data=DATA, fold=fold, loss=loss, model=MODEL, lr=lr, loss_lr=loss_lr,
                    loss_params=loss_params or {})
    store.register_run(cfg.run_id, cfg.result_config())
    store.start_run(cfg.run_id, device="cpu")
    per_query = {f"ndcg@{k}(gain=exp,norel=1)": dict(values) for k in (1, 3, 5, 10)}
    if n_relevant is not None:
        per_query["n_relevant"] = n_relevant
    means = {f"ndcg@{k}": float(np.mean(list(values.values()))) for k in (1, 3, 5, 10)}
    store.finish_run(cfg.run_id, test_means=means, per_query=per_query, train_seconds=1.0)
    return cfg.run_id


def test_runs_of_two_learning_rates_are_never_paired(tmp_path):
    """Folds 1-3 of both losses at lr 1e-3, folds 4-5 of learndcg (only) at lr 1e-2: the default table is
    the lr 1e-3 configuration, pairs folds 1-3 only, and the lr 1e-2 runs appear only when chosen,
    where approxndcg is missing (said plainly)."""
    rng = np.random.default_rng(1)
    with RunStore(tmp_path / "runs.sqlite") as store:
        pooled = {"learndcg": [], "approxndcg": []}
        for fold in (1, 2, 3):
            qids = [f"{fold}_{i}" for i in range(20)]
            base = rng.uniform(0.2, 0.8, 20)
            for loss, values in (("learndcg", base + 0.03), ("approxndcg", base + rng.normal(0, 0.02, 20))):
                _store_full_run(store, loss, fold, 1e-3, dict(zip(qids, values)))
                pooled[loss].extend(values)
        for fold in (4, 5):  # learndcg at another learning rate: a different configuration
            _store_full_run(store, "learndcg", fold, 1e-2, {f"{fold}_{i}": 0.0 for i in range(20)})
        table = significance_table(store, DATA, MODEL).set_index("loss")
        assert "lr=0.001" in table.attrs["configuration"] and table.loc["learndcg", "folds"] == 3
        assert table.loc["approxndcg", "p@10"] == pytest.approx(
            stats.ttest_rel(pooled["learndcg"], pooled["approxndcg"]).pvalue)
        assert table.attrs["missing_folds"] == {}
        other = table.attrs["other_configurations"]
        assert len(other) == 1 and "lr=0.01" in other[0]
        high = significance_table(store, DATA, MODEL, configuration=other[0])
        assert list(high["loss"]) == ["learndcg"] and high["folds"].tolist() == [2]
        assert not any(c.startswith("p@") for c in high.columns)
        # a loss lacking folds within a configuration is named
        _store_full_run(store, "listnet", 1, 1e-3, {f"1_{i}": 0.5 for i in range(20)})
        table = significance_table(store, DATA, MODEL)
        assert table.attrs["missing_folds"] == {"listnet": [2, 3]}
        from ltr.report.text import format_text

        text = format_text(table)
        assert "listnet lacks fold(s) 2, 3" in text and "ndcg@10(gain=exp,norel=1)" in text
        assert "lr=0.01" in text  # the other configuration is mentioned, not mixed in
        # ltr report follows the same rule
        from ltr.cli import main

        argv = ["report", "--data", DATA, "--model", MODEL, "--store", str(store.path)]
        assert main(argv + ["--list-configurations"]) == 0
        assert main(argv + ["--json", "--configuration", other[0]]) == 0
        assert main(argv + ["--configuration", "lr=7"]) == 2  # unknown: a one-line error naming the stored ones


def test_loss_parameter_variants_are_separate_rows(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold in (1, 2):
            qids = {f"{fold}_{i}": 0.5 for i in range(5)}
            _store_full_run(store, "learndcg", fold, 1e-3, qids)
            _store_full_run(store, "learndcg", fold, 1e-3, qids, loss_lr=0.01)
            _store_full_run(store, "approxndcg", fold, 1e-3, qids, loss_lr=0.01)  # no parameters: lr irrelevant
        table = significance_table(store, DATA, MODEL, candidate="approxndcg")
        assert set(table["loss"]) == {"learndcg", "learndcg(loss_lr=0.01)", "approxndcg"}
        assert (table["folds"] == 2).all()
        assert significance_table(store, DATA, MODEL).attrs["candidate"] == "learndcg"  # the exact label
        for fold in (1, 2):  # two variants of a loss, neither at the defaults: the candidate must be named
            _store_full_run(store, "learndcg_meta", fold, 1e-3, {f"{fold}_{i}": 0.5 for i in range(5)},
                            loss_params={"p_d": 2.0})
            _store_full_run(store, "learndcg_meta", fold, 1e-3, {f"{fold}_{i}": 0.5 for i in range(5)},
                            loss_params={"p_d": 3.0})
        with pytest.raises(ReportError, match="several variants"):
            significance_table(store, DATA, MODEL, candidate="learndcg_meta")


def test_exclude_queries_without_relevant_documents(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold in (1, 2):
            qids = [f"{fold}_{i}" for i in range(10)]
            counts = {q: (0.0 if i < 3 else 2.0) for i, q in enumerate(qids)}  # 3 queries per fold: none relevant
            learn = {q: (1.0 if counts[q] == 0 else 0.6 + 0.01 * i) for i, q in enumerate(qids)}
            approx = {q: (1.0 if counts[q] == 0 else 0.5 + 0.02 * i) for i, q in enumerate(qids)}
            _store_full_run(store, "learndcg", fold, 1e-3, learn, n_relevant=counts)
            _store_full_run(store, "approxndcg", fold, 1e-3, approx, n_relevant=counts)
        full = significance_table(store, DATA, MODEL).set_index("loss")
        kept = significance_table(store, DATA, MODEL, exclude_no_relevant=True).set_index("loss")
        assert kept.attrs["excluded_queries"] == 6 and full.attrs["excluded_queries"] is None
        a = [0.6 + 0.01 * i for i in range(3, 10)] * 2
        b = [0.5 + 0.02 * i for i in range(3, 10)] * 2
        assert kept.loc["approxndcg", "p@10"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
        assert kept.loc["approxndcg", "diff@10"] == pytest.approx(np.mean(np.subtract(a, b)))
        assert kept.loc["approxndcg", "ndcg@10"] == full.loc["approxndcg", "ndcg@10"]  # means over all queries
    with RunStore(tmp_path / "legacy.sqlite") as store:  # runs without the counts: a clear error
        _store_run(store, "learndcg", 1, {"a": 0.5, "b": 0.6})
        with pytest.raises(ReportError, match="relevant-document counts"):
            significance_table(store, DATA, MODEL, exclude_no_relevant=True)


def test_learndcg_fixed_is_reported_as_identical_to_approxndcg(tmp_path):
    from ltr.train import RunConfig

    assert RunConfig(data=DATA, fold=1, loss="learndcg_fixed", model=MODEL).run_id == \
        RunConfig(data=DATA, fold=1, loss="approxndcg", model=MODEL).run_id  # trained once
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold in (1, 2):
            qids = [f"{fold}_{i}" for i in range(8)]
            _store_full_run(store, "learndcg", fold, 1e-3, {q: 0.6 + 0.01 * i for i, q in enumerate(qids)})
            _store_full_run(store, "approxndcg", fold, 1e-3, {q: 0.5 + 0.03 * i for i, q in enumerate(qids)})
            _store_full_run(store, "listnet", fold, 1e-3, {q: 0.4 + 0.02 * i for i, q in enumerate(qids)})
        assert "learndcg_fixed" not in set(significance_table(store, DATA, MODEL)["loss"])  # not asked for
        table = significance_table(store, DATA, MODEL, holm=True,
                                   losses=["learndcg", "approxndcg", "learndcg_fixed", "listnet"]).set_index("loss")
        assert table.loc["learndcg_fixed", "p@10"] == table.loc["approxndcg", "p@10"]
        assert "identical by construction" in table.attrs["identical"]["learndcg_fixed"]
        # Holm's family counts the duplicate once: two distinct baselines
        p = [table.loc["approxndcg", "p@10"], table.loc["listnet", "p@10"]]
        assert table.loc["approxndcg", "p_holm@10"] == pytest.approx(holm_adjust(p)[0])
        assert table.loc["learndcg_fixed", "p_holm@10"] == table.loc["approxndcg", "p_holm@10"]


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
    assert r"$^\dagger$" in approx_line and "Highest mean: NDCG@1 " in latex


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
    from ltr.views.significance import significance_display, significance_legend

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


def test_paired_t_test_equals_scipy_ttest_rel():
    """paired_t_test (scipy.special's t tail, no scipy.stats import) gives ttest_rel's t and p: random
    pairs of many sizes, a tiny and a large effect, and differences that are all equal (t = ±inf, p = 0)."""
    from ltr.report.paired import paired_t_test

    rng = np.random.default_rng(7)
    for n in (2, 3, 5, 30, 200, 5000):
        for shift in (0.0, 1e-3, 0.5):
            a = rng.random(n)
            b = a - shift + rng.normal(scale=0.1, size=n)
            t, p = paired_t_test(a, b)
            ref = stats.ttest_rel(a, b)
            assert t == pytest.approx(ref.statistic, rel=1e-10) and p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
    a = np.array([0.5, 0.6, 0.7])
    with warnings.catch_warnings():  # scipy warns of the zero variance it handles as we do
        warnings.simplefilter("ignore")
        ref = stats.ttest_rel(a, a - 0.1)
    t, p = paired_t_test(a, a - 0.1)
    assert np.isinf(t) and t > 0 and p == 0.0 and np.isinf(ref.statistic) and ref.pvalue == 0.0


def test_the_results_page_data_path_imports_neither_torch_nor_scipy_stats(study):
    """The Results page's first render must not pay for torch (about 2 s) or scipy.stats (about 1 s):
    every views call the page makes runs in a fresh interpreter that then has neither imported."""
    import subprocess
    import sys
    import textwrap

    from core.paths import PROJECT_ROOT

    code = textwrap.dedent(f"""
        import sys
        from ltr.views import drift, reader, results, significance
        with reader.open_store({str(study[0].path)!r}) as store:
            options = results.result_options(store)
            data, model = options.iloc[0]["data"], options.iloc[0]["model"]
            every = results.completed_runs(store, data, model)
            configuration = results.configuration_choices(every)["configuration"].iloc[0]
            runs = results.runs_in_configuration(every, configuration)
            table = results.cost_effectiveness(runs, 10)
            results.cost_figure(table, 10, title="t", runs=runs).to_dict()
            report = significance.significance(store, data, model, holm=True, configuration=configuration,
                                        exclude_no_relevant=False)
            significance.significance_display(report, show_p=True)
            drift.theta_vs_steps(store, runs, "theta_d")
            results.fold_table(runs, 10), results.failed_runs(store)
        assert report["p@10"].notna().any(), report
        print(sorted(m for m in ("torch", "scipy.stats") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def _finish(store, run_id: str, values: dict[str, float], *, train_seconds: float = 1.0) -> None:
    """Start and complete a registered run whose per-query NDCG@k (the study's convention) is ``values`` at every k."""
    store.start_run(run_id, device="cpu")
    store.finish_run(run_id, test_means={f"ndcg@{k}": float(np.mean(list(values.values()))) for k in (1, 3, 5, 10)},
                     per_query={f"ndcg@{k}(gain=exp,norel=1)": dict(values) for k in (1, 3, 5, 10)},
                     train_seconds=train_seconds)


def _store_seeded_run(store, loss, fold, seed, values: dict[str, float]) -> str:
    from ltr.train import RunConfig

    cfg = RunConfig(data=DATA, fold=fold, loss=loss, model=MODEL, seed=seed)
    store.register_run(cfg.run_id, cfg.result_config())
    _finish(store, cfg.run_id, values)
    return cfg.run_id


def test_two_folds_by_two_seeds_mean_spread_and_the_seed_averaged_paired_test(tmp_path, capsys):
    """2 folds x 2 seeds: each loss's mean over folds x seeds, the seed-to-seed spread, and the paired test
    on each query's NDCG averaged over the seeds (ttest_rel computed here), Holm across the baselines;
    pooling the seeds as if they were more queries would give another p-value."""
    rng = np.random.default_rng(7)
    losses, seeds, n = ("learndcg", "approxndcg", "ranknet"), (0, 1), 25
    values = {}  # (loss, fold, seed) -> per-query array
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold in (1, 2):
            qids = [f"{fold}_{i}" for i in range(n)]
            base = rng.uniform(0.3, 0.7, n)
            for loss, shift in zip(losses, (0.02, 0.0, 0.01)):
                for seed in seeds:  # seed noise larger for ranknet: its seeds disagree
                    noise = rng.normal(0, 0.08 if loss == "ranknet" else 0.04, n)
                    values[loss, fold, seed] = np.clip(base + shift + noise, 0, 1)
                    _store_seeded_run(store, loss, fold, seed, dict(zip(qids, values[loss, fold, seed])))
        table = significance_table(store, DATA, MODEL, holm=True).set_index("loss")
        assert "seeds=0,1" in table.attrs["configuration"] and table.attrs["other_configurations"] == []
        assert table.attrs["seeds"] == [0, 1] and table.attrs["missing_seeds"] == {}
        averaged = {loss: np.concatenate([(values[loss, f, 0] + values[loss, f, 1]) / 2 for f in (1, 2)])
                    for loss in losses}
        p = {}
        for loss in losses:
            runs = [[values[loss, f, s].mean() for f in (1, 2)] for s in seeds]  # [seed][fold]
            assert table.loc[loss, "ndcg@10"] == pytest.approx(np.mean(runs), rel=1e-6)
            assert table.loc[loss, "seed_sd@10"] == pytest.approx(np.std(np.mean(runs, axis=1), ddof=1), rel=1e-5)
            assert table.loc[loss, "fold_sd@10"] == pytest.approx(np.std(np.mean(runs, axis=0), ddof=1), rel=1e-5)
            assert table.loc[loss, "seeds"] == 2 and table.loc[loss, "runs"] == 4 and table.loc[loss, "queries"] == 2 * n
            if loss != "learndcg":
                p[loss] = stats.ttest_rel(averaged["learndcg"], averaged[loss]).pvalue
                assert table.loc[loss, "p@10"] == pytest.approx(p[loss], rel=1e-6, abs=0)
                assert table.loc[loss, "diff@10"] == pytest.approx(np.mean(averaged["learndcg"] - averaged[loss]),
                                                                   abs=1e-6)
                pooled = stats.ttest_rel(np.concatenate([values["learndcg", f, s] for f in (1, 2) for s in seeds]),
                                         np.concatenate([values[loss, f, s] for f in (1, 2) for s in seeds])).pvalue
                assert not np.isclose(table.loc[loss, "p@10"], pooled, rtol=1e-3, atol=0)
        baselines = ["approxndcg", "ranknet"]
        assert table.loc[baselines, "p_holm@10"].tolist() == pytest.approx(holm_adjust([p[b] for b in baselines]).tolist(), rel=1e-6, abs=0)
        assert "averaged over the 2 seeds" in report_text.test_description(significance_table(store, DATA, MODEL))
        grid = fold_seed_table(significance_table(store, DATA, MODEL), 10)
        assert list(grid.columns) == ["loss", "fold", "seed 0", "seed 1", "mean over seeds"] and len(grid) == 6
        row = grid[(grid["loss"] == "ranknet") & (grid["fold"] == 2)].iloc[0]
        assert row["seed 1"] == pytest.approx(values["ranknet", 2, 1].mean(), rel=1e-6)

    from ltr.cli import main

    argv = ["report", "--data", DATA, "--model", MODEL, "--store", str(tmp_path / "runs.sqlite"), "--holm"]
    assert main(argv + ["--json"]) == 0
    records = {r["loss"]: r for r in json.loads(capsys.readouterr().out)}
    assert records["ranknet"]["seed_sd@10"] == pytest.approx(table.loc["ranknet", "seed_sd@10"])
    assert sorted((r["fold"], r["seed"]) for r in records["ranknet"]["per_fold_seed"]) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "per fold x seed" in out and "seed 1" in out and "±" in out and "averaged over the 2 seeds" in out


def _store_grid_run(store, cfg, experiment: str, values: np.ndarray) -> None:
    """A completed run of grid config ``cfg``: ``values`` as the per-query NDCG@k of its fold's queries
    ``<fold>_0 .. <fold>_n`` at every k."""
    store.register_run(cfg.run_id, cfg.result_config(), experiment=experiment)
    _finish(store, cfg.run_id, dict(zip([f"{cfg.fold}_{i}" for i in range(len(values))], values)))


def test_a_tuned_grid_is_one_configuration_with_its_per_loss_settings_in_the_variants(tmp_path):
    """A grid with per-loss learning rates and batch sizes (``ltr grid --tuned``) is compared in one table: its
    configuration says ``lr=per loss``, each row names its loss's settings, and the folds are paired as usual."""
    from ltr.grid import expand_grid
    from ltr.tune import apply_tuned

    spec = {"name": "tuned", "data": [DATA], "folds": [1, 2], "losses": ["learndcg", "approxndcg", "ranknet"],
            "models": [MODEL], "train": {"lr": 0.001, "batch_size": 64}}
    spec = apply_tuned(spec, {"overrides": {"loss": {"approxndcg": {"lr": 0.004, "batch_size": 32},
                                                     "learndcg": {"lr": 0.002}}},
                              "loss_params": {"approxndcg": {"alpha": 2.5}}})
    grid = expand_grid(spec)
    rng = np.random.default_rng(3)
    pooled = {}
    with RunStore(tmp_path / "runs.sqlite") as store:
        store.register_experiment(grid.name, grid.source)
        for fold in (1, 2):
            base = rng.uniform(0.3, 0.7, 20)
            for cfg in (c for c in grid.configs if c.fold == fold):
                values = np.clip(base + rng.normal(0.02 if cfg.loss == "learndcg" else 0, 0.03, 20), 0, 1)
                pooled.setdefault(cfg.loss, []).extend(values)
                _store_grid_run(store, cfg, grid.name, values)
        table = significance_table(store, DATA, MODEL, experiment="tuned").set_index("loss")
    assert "lr=per loss" in table.attrs["configuration"] and "batch=per loss" in table.attrs["configuration"]
    assert table.attrs["other_configurations"] == []
    assert list(table.index) == ["ranknet(batch_size=64,lr=0.001)", "approxndcg(alpha=2.5,batch_size=32,lr=0.004)",
                                 "learndcg(batch_size=64,lr=0.002)"]  # the study's loss order
    assert table.attrs["candidate"] == "learndcg(batch_size=64,lr=0.002)" and (table["folds"] == 2).all()
    assert table.loc["ranknet(batch_size=64,lr=0.001)", "p@10"] == pytest.approx(
        stats.ttest_rel(pooled["learndcg"], pooled["ranknet"]).pvalue, rel=1e-6, abs=0)


def _store_tree_run(store, fold, seed, values: dict[str, float], *, epochs=200, learning_rate=0.05) -> str:
    """A completed LambdaMART run as ltr.gbdt stores one (model and loss ``lambdamart``, its own rounds,
    patience and LightGBM parameters, the LightGBM provenance in the stored config)."""
    from ltr.train import RunConfig

    cfg = RunConfig(data=DATA, fold=fold, loss="lambdamart", model="lambdamart", seed=seed, epochs=epochs,
                    patience=20, model_params={"learning_rate": learning_rate})
    store.register_run(cfg.run_id, {**cfg.result_config(), "lightgbm": {"version": "4.7.0"}})
    _finish(store, cfg.run_id, values, train_seconds=0.5)
    return cfg.run_id


def test_lambdamart_is_a_baseline_row_of_the_neural_rankers_table(tmp_path, capsys):
    """Issue 34: LambdaMART's runs (model lambdamart, its own settings) appear as a row ``lambdamart (LightGBM)``
    of the MLP's table, paired with LearnDCG by (fold, seed, test query) on the seed-averaged NDCG and tested in
    the same Holm family; its settings are named; a seed the MLP configuration lacks is not paired. Before, the
    MLP table had no LambdaMART row at all."""
    from ltr.views import results

    rng = np.random.default_rng(3)
    n, values = 30, {}
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold in (1, 2):
            qids = [f"{fold}_{i}" for i in range(n)]
            base = rng.uniform(0.3, 0.7, n)
            for loss, shift in (("learndcg", 0.03), ("approxndcg", 0.0), ("lambdamart", 0.01)):
                for seed in (0, 1):
                    values[loss, fold, seed] = np.clip(base + shift + rng.normal(0, 0.04, n), 0, 1)
                    if loss == "lambdamart":
                        _store_tree_run(store, fold, seed, dict(zip(qids, values[loss, fold, seed])))
                    else:
                        _store_seeded_run(store, loss, fold, seed, dict(zip(qids, values[loss, fold, seed])))
            # a seed the MLP configuration does not have: nothing to pair it with
            _store_tree_run(store, fold, 2, dict(zip(qids, rng.uniform(0, 1, n))))
        table = significance_table(store, DATA, MODEL, holm=True)
        rows = table.set_index("loss")
        every = results.completed_runs(store, DATA, MODEL)
        choices = results.configuration_choices(every)
        runs = results.runs_in_configuration(every, choices["configuration"].iloc[0])
        cost = results.cost_effectiveness(runs, 10)
        figure = results.cost_figure(cost, 10, title="t", runs=runs)
    tree = "lambdamart (LightGBM)"
    assert list(rows.index) == ["approxndcg", "learndcg", tree]
    assert table.attrs["other_configurations"] == [] and "seeds=0,1" in table.attrs["configuration"]
    assert rows.loc[tree, "model"] == MODEL and rows.loc[tree, "runs"] == 4 and rows.loc[tree, "seeds"] == 2
    averaged = {loss: np.concatenate([(values[loss, f, 0] + values[loss, f, 1]) / 2 for f in (1, 2)])
                for loss in ("learndcg", "approxndcg", "lambdamart")}
    p = {b: stats.ttest_rel(averaged["learndcg"], averaged[b]).pvalue for b in ("approxndcg", "lambdamart")}
    assert rows.loc[tree, "p@10"] == pytest.approx(p["lambdamart"], rel=1e-6, abs=0)
    assert rows.loc[tree, "pairs@10"] == 2 * n
    assert rows.loc[tree, "diff@10"] == pytest.approx(np.mean(averaged["learndcg"] - averaged["lambdamart"]), abs=1e-6)
    holm = holm_adjust([p["approxndcg"], p["lambdamart"]])  # one family: both baselines
    assert rows.loc[["approxndcg", tree], "p_holm@10"].tolist() == pytest.approx(holm.tolist(), rel=1e-6, abs=0)
    mean = np.mean([values["lambdamart", f, s].mean() for f in (1, 2) for s in (0, 1)])
    assert rows.loc[tree, "ndcg@10"] == pytest.approx(mean, rel=1e-6)
    # its own settings are named: notes, caption, the CSV/JSON column
    note = next(x for x in table_notes(table) if x.startswith(tree))
    assert 'rounds=200 · patience=20 · lightgbm {"learning_rate": 0.05} (LightGBM 4.7.0)' in note
    assert "Holm family" in note and "paired" in note
    assert 'baseline lambdamart (LightGBM): rounds=200' in report_text.table_caption(table)
    assert "rounds=200" in rows.loc[tree, "baseline_settings"] and pd.isna(rows.loc["learndcg", "baseline_settings"])
    assert "lambdamart (LightGBM)" in to_latex(table)
    # the NDCG-vs-time scatter: a point per fold x seed of the configuration and its mean marker
    assert tree in choices["losses"].iloc[0] and choices["runs"].iloc[0] == 8
    assert cost.set_index("loss").loc[tree, "folds"] == 2
    trace = next(t for t in figure.data if t.name == tree)
    assert trace.y[0] == pytest.approx(mean, rel=1e-6)
    assert len(next(t for t in figure.data if t.name == f"{tree} (folds)").x) == 4

    from ltr.cli import main

    argv = ["report", "--data", DATA, "--store", str(tmp_path / "runs.sqlite"), "--holm"]
    assert main(argv + ["--json"]) == 0  # no --model: the MLP's table, not a LambdaMART table of its own
    records = json.loads(capsys.readouterr().out)
    assert {r["model"] for r in records} == {MODEL}
    record = next(r for r in records if r["loss"] == tree)
    assert record["p_holm@10"] == pytest.approx(rows.loc[tree, "p_holm@10"])
    assert sorted((r["fold"], r["seed"]) for r in record["per_fold_seed"]) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert main(argv) == 0
    assert "lambdamart (LightGBM): a tree-ranker baseline" in capsys.readouterr().out


def test_a_grid_tuned_on_each_folds_validation_set_is_one_variant_per_loss(tmp_path):
    """Tuning per fold (``ltr tune --fold K``, then ``ltr grid --folds K --tuned`` for each fold, as the MQ2008
    reproduction runs it) gives each loss other settings in each fold: they are one variant, ``loss(tuned per
    fold)``, paired over the folds, not one single-fold variant per setting with nothing to pair."""
    from ltr.grid import expand_grid
    from ltr.tune import apply_tuned

    tuned = {1: {"learndcg": {"lr": 0.002}, "ranknet": {"lr": 0.003, "batch_size": 32}},
             2: {"learndcg": {"lr": 0.0005}, "ranknet": {"lr": 0.001, "batch_size": 16}}}
    rng = np.random.default_rng(5)
    pooled = {}
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold, overrides in tuned.items():
            spec = apply_tuned({"name": "per-fold", "data": [DATA], "folds": [fold], "losses": ["learndcg", "ranknet"],
                                "models": [MODEL], "train": {"lr": 0.001, "batch_size": 64}},
                               {"overrides": {"loss": overrides}})
            grid = expand_grid(spec)
            store.register_experiment(grid.name, grid.source)
            base = rng.uniform(0.3, 0.7, 20)
            for cfg in grid.configs:
                values = np.clip(base + rng.normal(0.03 if cfg.loss == "learndcg" else 0, 0.03, 20), 0, 1)
                pooled.setdefault(cfg.loss, []).extend(values)
                _store_grid_run(store, cfg, grid.name, values)
        table = significance_table(store, DATA, MODEL, experiment="per-fold").set_index("loss")
    assert list(table.index) == ["ranknet(tuned per fold)", "learndcg(tuned per fold)"]
    assert (table["folds"] == 2).all() and table.attrs["candidate"] == "learndcg(tuned per fold)"
    assert table.loc["ranknet(tuned per fold)", "p@10"] == pytest.approx(
        stats.ttest_rel(pooled["learndcg"], pooled["ranknet"]).pvalue, rel=1e-6, abs=0)


def test_lambdamart_tuned_per_fold_is_one_baseline_row(tmp_path):
    """Issue 41: LambdaMART tuned on each fold's validation set has other LightGBM settings in each fold; in an
    experiment it is one row ``lambdamart (LightGBM; tuned per fold)`` paired over the folds, not one single-fold
    row per setting."""
    from ltr.train import RunConfig

    rng = np.random.default_rng(11)
    with RunStore(tmp_path / "runs.sqlite") as store:
        store.register_experiment("tuned", {"name": "tuned"})
        for fold, rate in ((1, 0.03), (2, 0.2)):
            base = rng.uniform(0.3, 0.7, 20)
            for loss, shift in (("learndcg", 0.02), ("approxndcg", 0.0)):
                cfg = RunConfig(data=DATA, fold=fold, loss=loss, model=MODEL)
                _store_grid_run(store, cfg, "tuned", np.clip(base + shift + rng.normal(0, 0.02, 20), 0, 1))
            run_id = _store_tree_run(store, fold, 0, dict(zip([f"{fold}_{i}" for i in range(20)],
                                                              np.clip(base + rng.normal(0, 0.02, 20), 0, 1))),
                                     learning_rate=rate)
            store.conn.execute("UPDATE runs SET experiment = 'tuned' WHERE run_id = ?", (run_id,))
            store.conn.commit()
        table = significance_table(store, DATA, MODEL, experiment="tuned").set_index("loss")
    assert "lambdamart (LightGBM; tuned per fold)" in table.index
    assert table.loc["lambdamart (LightGBM; tuned per fold)", "folds"] == 2
