"""Drift or learning: the drift reference line, the per-run diagnostic and final θ against steps,
on store contents whose answer is known (one run that drifts at Adam's maximal rate, one that settles)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ltr.views import charts, drift, results
from ltr.store import RunStore

LR = 0.01


def _run(store, run_id, fold, steps, *, drift: bool, loss="learndcg"):
    store.register_run(run_id, {"data": "synthetic-mq2008", "fold": fold, "loss": loss, "model": "mlp", "seed": 0,
                                "lr": 0.001, "loss_lr": LR})
    store.start_run(run_id, device="cpu")
    theta0 = 0.5413
    rows = []
    for step in range(steps):
        if drift:  # gradient always negative (zero on every 10th batch: no relevant document); θ climbs by lr
            grad = 0.0 if step % 10 == 9 else -0.3
            theta = theta0 + LR * step
        else:  # gradient changes sign; θ settles near 0.8
            grad = (-1.0) ** step * 0.2
            theta = 0.8 - (0.8 - theta0) * np.exp(-step / 20)
        rows.append((step, step // 10, {"loss": -0.5, "theta_d": theta, "grad_theta_d": grad}))
    store.log_steps(run_id, rows)


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as s:
        _run(s, "drift-f1", 1, 100, drift=True)
        _run(s, "drift-f2", 2, 300, drift=True)
        _run(s, "settle-f1", 1, 200, drift=False, loss="learndcg_meta")
        yield s


def test_diagnostic_tells_drift_from_settling(store):
    diag = drift.drift_diagnostic(store, ["drift-f1", "drift-f2", "settle-f1"]).set_index("run_id")
    drifting, settle = diag.loc["drift-f2"], diag.loc["settle-f1"]
    assert drifting["steps"] == 300 and drifting["loss_lr"] == LR
    assert drifting["grad_negative"] == pytest.approx(0.9) and drifting["grad_zero"] == pytest.approx(0.1)
    assert drifting["grad_positive"] == 0.0 and drifting["one_sign"] == 1.0
    assert drifting["of_reference"] == pytest.approx(299 / 300)  # it used all of Adam's maximal drift
    assert drifting["drift_reference"] == pytest.approx(0.5413 + LR * 300)
    assert settle["one_sign"] == pytest.approx(0.5) and abs(settle["of_reference"]) < 0.2


def test_drift_reference_line_on_the_theta_chart(store):
    fig, _ = charts.step_figure(store, ["drift-f1", "drift-f2"], ["theta_d"], title="t")
    assert drift.add_drift_reference(fig, store, ["drift-f1", "drift-f2"], ["theta_d"]) == 1  # same θ₀ and lr
    line = [t for t in fig.data if t.legendgroup == "drift"][0]
    assert list(line.x) == [0, 300] and line.y[1] == pytest.approx(0.5413 + LR * 300)
    assert line.line.dash == "dash"
    # a panel without a θ gets no reference
    fig, _ = charts.step_figure(store, ["drift-f1"], ["loss"], title="t")
    assert drift.add_drift_reference(fig, store, ["drift-f1"], ["loss"]) == 0
    # nor does a run whose config names no learning rate (the line would read "θ₀ + nan·step")
    store.register_run("no-lr", {"data": "synthetic-mq2008", "fold": 3, "loss": "learndcg", "model": "mlp", "seed": 0})
    store.log_steps("no-lr", [(s, 0, {"theta_d": 0.5 + 0.01 * s}) for s in range(10)])
    for layout in charts.FOLD_LAYOUTS.values():
        fig, _ = charts.step_figure(store, ["no-lr"], ["theta_d"], title="t", **layout)
        assert drift.add_drift_reference(fig, store, ["no-lr"], ["theta_d"], **layout) == 0, layout


def test_final_theta_against_steps_has_the_learning_rate_as_slope_when_drifting(store):
    runs = store.list_runs(run_ids=["drift-f1", "drift-f2", "settle-f1"])
    points = drift.theta_vs_steps(store, runs)
    assert sorted(points["steps"]) == [100, 200, 300]
    slopes = drift.fitted_slopes(points).set_index("loss")
    assert slopes.loc["learndcg", "slope_per_step"] == pytest.approx(LR, rel=1e-6)  # drift: set by the step count
    assert np.isnan(slopes.loc["learndcg_meta", "slope_per_step"])  # one point: no slope
    fig = drift.theta_steps_figure(points)
    assert {t.name for t in fig.data} >= {"learndcg", "learndcg_meta", "learndcg fit"}


def test_results_runs_of_one_configuration_only(tmp_path):
    """Runs of two learning rates in one store: the Results page's selection never mixes them."""
    from ltr.train import RunConfig

    with RunStore(tmp_path / "runs.sqlite") as store:
        for lr, folds, loss in ((1e-3, (1, 2, 3), "learndcg"), (1e-3, (1, 2), "approxndcg"), (1e-2, (1, 2), "learndcg")):
            for fold in folds:
                cfg = RunConfig(data="synthetic-mq2008", fold=fold, loss=loss, model="mlp", lr=lr)
                store.register_run(cfg.run_id, cfg.result_config())
                store.start_run(cfg.run_id, device="cpu")
                store.finish_run(cfg.run_id, test_means={"ndcg@10": lr * 100}, per_query={}, train_seconds=1.0)
        runs = results.completed_runs(store, "synthetic-mq2008", "mlp")
        choices = results.configuration_choices(runs)
        assert len(choices) == 2 and "lr=0.001" in choices["configuration"][0]  # most runs first
        low = results.runs_in_configuration(runs, choices["configuration"][0])
        high = results.runs_in_configuration(runs, choices["configuration"][1])
        assert set(low["test_ndcg10"]) == {0.1} and set(high["test_ndcg10"]) == {1.0}  # never mixed
        assert results.missing_folds(low) == {"approxndcg": [3]}
        table = results.fold_table(low)
        assert table.loc["mean", "learndcg"] == pytest.approx(0.1)
        assert results.missing_folds(high) == {}


def _label_boxes(fig):
    """(x, y, text) of every non-empty point label in the figure's marker traces."""
    return [(x, y, text) for t in fig.data if t.text is not None
            for x, y, text in zip(t.x, t.y, t.text) if text]


def test_final_theta_labels_of_folds_that_ran_equally_long_do_not_overlap():
    """Five folds stopped at the same step with almost the same θ_d (and a second loss on the same spot):
    each point used to get its own "fold N" label at the same place, one over the other. Coinciding
    points now share one label naming every fold there, and no two labels are drawn on one spot."""
    points = pd.DataFrame({"loss": ["learndcg"] * 5 + ["learndcg_meta"] * 2 + ["learndcg"],
                           "fold": [1, 2, 3, 4, 5, 1, 2, 6], "steps": [500] * 7 + [900],
                           "theta_final": [0.71, 0.7102, 0.7099, 0.7101, 0.7, 0.7103, 0.2, 0.9],
                           "loss_lr": [1e-3] * 8, "run_id": [f"r{i}" for i in range(8)]})
    fig = drift.theta_steps_figure(points)
    labels = _label_boxes(fig)
    texts = [text for _, _, text in labels]
    # every fold is still named once, on the figure
    assert sorted(texts) == sorted(["learndcg folds 1, 2, 3, 4, 5 · learndcg_meta fold 1",
                                    "fold 2", "fold 6"]), texts
    xs, ys = np.array([x for x, _, _ in labels], float), np.array([y for _, y, _ in labels], float)
    x_span, y_span = np.ptp(points["steps"]) or 1.0, np.ptp(points["theta_final"]) or 1.0
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            assert abs(xs[i] - xs[j]) / x_span > 0.05 or abs(ys[i] - ys[j]) / y_span > 0.05, (labels[i], labels[j])
    # the points themselves are all kept (hover names each fold)
    assert sum(len(t.x) for t in fig.data if t.mode == "markers+text") == 8


def test_final_theta_points_of_several_seeds_are_named_by_fold_and_seed():
    """A configuration trained with seeds has a point per (fold, seed): labels say which seed, so fold 1's three
    points no longer read "folds 1, 1, 1" (or three unexplained "fold 1")."""
    points = pd.DataFrame({"loss": ["learndcg"] * 4, "fold": [1, 1, 1, 2], "seed": [0, 1, 2, 0],
                           "steps": [100, 100, 400, 700], "theta_final": [0.50, 0.5001, 0.8, 1.1],
                           "loss_lr": [1e-3] * 4, "run_id": [f"r{i}" for i in range(4)]})
    texts = sorted(text for _, _, text in _label_boxes(drift.theta_steps_figure(points)))
    assert texts == ["fold 1 (seed 2)", "fold 2 (seed 0)", "folds 1 (seed 0), 1 (seed 1)"]
    one_seed = points.assign(seed=0)
    assert sorted(text for _, _, text in _label_boxes(drift.theta_steps_figure(one_seed))) == \
        ["fold 1", "fold 2", "folds 1, 1"]  # one seed: the fold alone, as before


def test_labels_wider_than_fold_n_keep_clear_of_each_other():
    """Seen on the tuned MQ2008 runs: "fold 1 (seed 3)" beside a group's label 0.15 of the chart away, on one
    line, drew one over the other (the grouping distance was sized for "fold N"). Labels as wide as their
    text that would overlap are joined; a short label at that distance stays its own."""
    points = pd.DataFrame({"loss": ["learndcg"] * 4, "fold": [1, 2, 3, 4], "seed": [3, 1, 2, 1],
                           "steps": [100, 130, 200, 300], "theta_final": [0.50, 0.5, 0.9, 0.1],
                           "loss_lr": [1e-3] * 4, "run_id": [f"r{i}" for i in range(4)]})
    # 0.15 of the x span apart: beyond the grouping distance, within a seed label's width
    texts = sorted(t for _, _, t in _label_boxes(drift.theta_steps_figure(points)))
    assert texts == ["fold 3 (seed 2)", "fold 4 (seed 1)", "folds 1 (seed 3), 2 (seed 1)"]
    one_seed = points.assign(seed=0)  # "fold 1" and "fold 2" fit side by side there
    assert sorted(t for _, _, t in _label_boxes(drift.theta_steps_figure(one_seed))) == ["fold 1", "fold 2", "fold 3",
                                                                                          "fold 4"]
