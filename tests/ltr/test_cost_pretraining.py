"""NeuralLoss's one-time pre-training in the cost figures (follow-up of issue 34): each run is charged its training
loop plus an equal share of the surrogate's one-time pre-training among its grid's runs that used it
(``ltr.cost.MINUTES_CONVENTION``), never the whole pre-training per fold; which run built the surrogate and its key
are stored; runs stored before those columns read as before; every figure and table names the convention."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ltr.cost import completed_runs, cost_effectiveness, in_configuration
from ltr.store import RunStore
from tests.ltr.support import one_torch_thread

DATA = "synthetic-mq2008"
PRETRAIN = 1080.0  # seconds: the MQ2008 surrogate's one-time pre-training, as the reproduction stored it
TRAIN = 6.0  # seconds of training loop per run


def _finished(store: RunStore, loss: str, fold: int, seed: int, *, experiment: str, key: str | None = None,
              paid: bool | None = None, provenance: str | None = None, base: float = 0.5, rng=None) -> str:
    """One completed run written the way ltr.train.run writes it (``provenance``: the surrogate key only in the
    stored config, as runs stored before the pretrain_key column carry it)."""
    config = {"data": DATA, "fold": fold, "loss": loss, "model": "mlp", "seed": seed, "epochs": 2, "lr": 0.001}
    if provenance is not None:
        config["loss_provenance"] = {"surrogate": provenance}
    run_id = f"{experiment}-{loss}-f{fold}-s{seed}"
    store.register_run(run_id, config, total_epochs=2, experiment=experiment)
    store.start_run(run_id, device="cpu", threads=1)
    rng = rng or np.random.default_rng(fold * 10 + seed)
    values = {f"q{fold}-{i}": float(np.clip(base + rng.normal(0, 0.02), 0, 1)) for i in range(30)}
    means = {f"ndcg@{k}": float(np.mean(list(values.values()))) for k in (1, 3, 5, 10)}
    pretrained = loss == "neuralloss"
    store.finish_run(run_id, test_means=means, per_query={f"ndcg@{k}": values for k in (1, 3, 5, 10)},
                     train_seconds=TRAIN, pretrain_seconds=PRETRAIN if pretrained else None, best_epoch=1,
                     cpu_seconds=TRAIN, **({"pretrain_paid": paid, "pretrain_key": key} if key else {}))
    return run_id


@pytest.fixture
def five_folds_three_seeds(tmp_path):
    """MQ2008's shape: NeuralLoss on 5 folds x 3 seeds sharing one surrogate that fold 1 seed 0 built (the rest
    loaded it), beside LearnDCG and ApproxNDCG; a second grid loaded the same surrogate for 5 runs."""
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        for fold in range(1, 6):
            for seed in range(3):
                _finished(store, "neuralloss", fold, seed, experiment="shared", key="k",
                          paid=(fold, seed) == (1, 0), base=0.47)
                _finished(store, "learndcg", fold, seed, experiment="shared", base=0.55)
                _finished(store, "approxndcg", fold, seed, experiment="shared", base=0.45)
            _finished(store, "neuralloss", fold, 5, experiment="tuned", key="k", paid=False)
    return path


def test_five_folds_sharing_one_surrogate_are_each_charged_a_share_not_the_whole_pre_training(five_folds_three_seeds):
    """Before: minutes = train + the whole pre-training on every run (NeuralLoss at 18 min per fold on MQ2008)."""
    with RunStore(five_folds_three_seeds) as store:
        runs = in_configuration(completed_runs(store, DATA, "mlp", "shared"))
    neural = runs[runs["loss"] == "neuralloss"]
    assert len(neural) == 15
    # each of the 15 runs that shared the surrogate pays a fifteenth of it, on top of its own loop
    assert neural["minutes"].tolist() == pytest.approx([(TRAIN + PRETRAIN / 15) / 60] * 15)
    assert neural["minutes"].sum() * 60 == pytest.approx(15 * TRAIN + PRETRAIN)  # the grid paid it once
    assert set(neural["pretrain_shared_by"]) == {15} and set(neural["pretrain_once_seconds"]) == {PRETRAIN}
    others = runs[runs["loss"] != "neuralloss"]
    assert others["minutes"].tolist() == pytest.approx([TRAIN / 60] * len(others))
    table = cost_effectiveness(runs).set_index("loss")
    assert table.loc["neuralloss", "minutes_mean"] == pytest.approx((TRAIN + PRETRAIN / 15) / 60)
    assert table.loc["neuralloss", "minutes_max"] < PRETRAIN / 60 / 2  # never the whole pre-training per fold
    # the table names the one-time cost and the runs sharing it; the other losses have none
    assert table.loc["neuralloss", "pretrain_once_minutes"] == pytest.approx(PRETRAIN / 60)
    assert table.loc["neuralloss", "pretrain_shared_by"] == 15
    assert table["pretrain_once_minutes"].drop("neuralloss").isna().all()
    assert (table["pretrain_shared_by"].drop("neuralloss") == 0).all()


def test_a_grid_is_charged_its_surrogate_once_whichever_grid_built_it(five_folds_three_seeds):
    """The tuned grid loaded the surrogate the shared grid built: its 5 runs share one pre-training of their own,
    so a grid's figures do not depend on the runs of other grids."""
    with RunStore(five_folds_three_seeds) as store:
        tuned = completed_runs(store, DATA, "mlp", "tuned")
        every = completed_runs(store, DATA, "mlp")
    assert tuned["minutes"].tolist() == pytest.approx([(TRAIN + PRETRAIN / 5) / 60] * 5)
    assert set(tuned["pretrain_paid"]) == {0}
    # read across grids (the Results page reads every run of a data set and ranker), a run keeps its grid's share
    shares = dict(zip(every["run_id"], every["minutes"]))
    assert shares["tuned-neuralloss-f3-s5"] == pytest.approx((TRAIN + PRETRAIN / 5) / 60)
    assert shares["shared-neuralloss-f3-s1"] == pytest.approx((TRAIN + PRETRAIN / 15) / 60)


def test_two_runs_that_both_built_the_surrogate_both_count():
    """A cold cache and two runs at once: both pre-trained, so the grid paid twice; loaded-only: once."""
    import pandas as pd

    from ltr.cost import pretraining_shares

    frame = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "experiment": ["g"] * 4,
                          "pretrain_seconds": [100.0, 120.0, 120.0, 120.0], "pretrain_paid": [1, 1, 0, 0],
                          "pretrain_key": ["k"] * 4, "config": [{}] * 4})
    shares = pretraining_shares(frame)
    assert shares["pretrain_once_seconds"].tolist() == pytest.approx([220.0] * 4)
    assert shares["pretrain_share_seconds"].tolist() == pytest.approx([55.0] * 4)
    loaded = pretraining_shares(frame.assign(pretrain_paid=[0, 0, 0, 0], pretrain_seconds=[120.0] * 4))
    assert loaded["pretrain_share_seconds"].tolist() == pytest.approx([30.0] * 4)


def test_runs_stored_before_the_columns_share_by_their_config_or_read_as_before(tmp_path):
    """No pretrain_key column value: the surrogate named by the stored config's loss provenance (runs since
    issue 34, e.g. the MQ2008 reproduction's store) is shared; a run naming none is charged its whole
    pre-training, as before."""
    with RunStore(tmp_path / "runs.sqlite") as store:
        for fold in (1, 2, 3):
            _finished(store, "neuralloss", fold, 0, experiment="keyed", provenance="c4d12a92")
            _finished(store, "neuralloss", fold, 0, experiment="unkeyed")
        keyed = completed_runs(store, DATA, "mlp", "keyed")
        unkeyed = completed_runs(store, DATA, "mlp", "unkeyed")
    assert keyed["minutes"].tolist() == pytest.approx([(TRAIN + PRETRAIN / 3) / 60] * 3)
    assert unkeyed["minutes"].tolist() == pytest.approx([(TRAIN + PRETRAIN) / 60] * 3)
    assert set(unkeyed["pretrain_shared_by"]) == {1}
    assert keyed["pretrain_paid"].isna().all()  # not recorded: neither built here nor loaded


def test_the_old_fixture_store_reads_its_minutes_as_before(tmp_path):
    from tests.support.old_stores import copy_old_store

    path = copy_old_store("runs.sqlite", tmp_path)
    with RunStore(path) as store:
        done = store.get_run("run-done")
        assert (done["pretrain_paid"], done["pretrain_key"]) == (None, None)
        runs = completed_runs(store, "mq2008", "mlp")
    (minutes,) = runs.loc[runs["run_id"] == "run-done", "minutes"]
    assert minutes == pytest.approx((done["train_seconds"] + done["pretrain_seconds"]) / 60)


def test_the_figure_table_findings_runs_and_export_name_the_convention(five_folds_three_seeds, tmp_path, capsys):
    from ltr import cli
    from ltr.cost import MINUTES_AXIS_TITLE, MINUTES_CONVENTION
    from ltr.export import export_comparison
    from ltr.findings import as_json, check_findings, text_lines
    from ltr.views import results as views

    with RunStore(five_folds_three_seeds) as store:
        runs = in_configuration(completed_runs(store, DATA, "mlp", "shared"))
        table = cost_effectiveness(runs)
        figure = views.cost_figure(table, 10, title="t", runs=runs)
        found = check_findings(store, "shared")
        export_comparison(store, DATA, "mlp", "shared", tmp_path / "export")
    share = (TRAIN + PRETRAIN / 15) / 60
    assert figure.layout.xaxis.title.text == MINUTES_AXIS_TITLE == views.X_AXIS_TITLE
    assert "share of NeuralLoss's one-time pre-training" in MINUTES_AXIS_TITLE
    assert MINUTES_CONVENTION in views.COST_CAPTION and "pretrain_once_minutes" in views.COST_CAPTION
    folds = next(t for t in figure.data if t.name == "neuralloss (folds)")
    assert list(folds.x) == pytest.approx([share] * 15)
    built = "its share of a one-time 1080.0 s pre-training shared by 15 run(s) (built in this run)"
    assert built in folds.customdata[0][5]
    assert "(loaded from the cache)" in folds.customdata[1][5]
    assert "%{customdata[5]}" in folds.hovertemplate
    mean = next(t for t in figure.data if t.name == "neuralloss")
    assert "a share of 18.00 min one-time pre-training shared by 15 run(s)" in mean.hovertemplate
    plain = next(t for t in figure.data if t.name == "approxndcg (folds)")
    assert all(c[5] == "" for c in plain.customdata)  # no pre-training: no line

    ranking = {r["loss"]: r for r in found["cost_ranking"][next(iter(found["cost_ranking"]))]}
    assert ranking["neuralloss"]["minutes_mean"] == pytest.approx(share)
    assert ranking["neuralloss"]["pretrain_once_minutes"] == pytest.approx(PRETRAIN / 60)
    assert ranking["neuralloss"]["pretrain_shared_by"] == 15 and "pretrain_once_minutes" not in ranking["approxndcg"]
    assert as_json(found)["cost_ranking_note"].endswith(MINUTES_CONVENTION)
    text = " ".join(line.strip() for line in text_lines(found, verbose=True))  # whole, wrapped at 100 columns
    assert f"neuralloss {share:.2f} (incl. its share of 18.00 min one-time pre-training shared by 15 runs)" in text
    assert MINUTES_CONVENTION in text

    cost_tex = (tmp_path / "export" / "cost.tex").read_text()
    scatter_tex = (tmp_path / "export" / "ndcg-vs-time.tex").read_text()
    for tex in (cost_tex, scatter_tex):
        assert "an equal share of NeuralLoss" in tex and "one-time pre-training 18.00 min shared by 15 runs" in tex
    with open(tmp_path / "export" / "cost.csv") as f:
        header = f.readline()
    assert "pretrain_once_minutes" in header and "pretrain_shared_by" in header

    assert cli.main(["runs", "--store", str(five_folds_three_seeds), "--experiment", "shared"]) == 0
    out = capsys.readouterr().out
    assert f"minutes: {MINUTES_CONVENTION}" in out
    header, *rows = out.splitlines()
    assert {"minutes", "pretrain_paid", "pretrain_shared_by"} <= set(header.split())
    assert cli.main(["runs", "--store", str(five_folds_three_seeds), "--experiment", "shared", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["minutes"] == MINUTES_CONVENTION
    neural = [r for r in listed["runs"] if "neuralloss" in r["run_id"]]
    assert [r["minutes"] for r in neural] == pytest.approx([share] * 15)
    assert sorted(r["pretrain_paid"] for r in neural) == [0] * 14 + [1]


@pytest.mark.slow  # about 5 s: three real runs
@pytest.mark.usefixtures("one_thread")
def test_trained_runs_record_which_one_built_the_surrogate_and_share_it(tiny_data, _isolated_cache, tmp_path):
    """Three folds of NeuralLoss trained for real: the first builds the surrogate (pretrain_paid 1), the others
    load it (0), all store its key; the cost figures charge each a third of its one-time cost."""
    from ltr.train import RunConfig, train_run

    # a surrogate no other test builds (its seed), so the first fold here is the one that pre-trains it
    tiny = {"d_model": 8, "n_heads": 2, "n_layers": 1, "n_frequencies": 2, "max_steps": 2, "eval_every": 1,
            "seed": 9173}
    path = tmp_path / "runs.sqlite"
    with one_torch_thread(), RunStore(path) as store:
        ids = [train_run(RunConfig(data=tiny_data, fold=fold, loss="neuralloss", model="mlp", epochs=1,
                                   loss_params=tiny, experiment="grid"), store).run_id for fold in (1, 2, 3)]
        stored = [store.get_run(run_id) for run_id in ids]
        runs = completed_runs(store, tiny_data, "mlp", "grid").set_index("run_id").loc[ids]
    assert [r["pretrain_paid"] for r in stored] == [1, 0, 0]
    key = stored[0]["config"]["loss_provenance"]["surrogate"]
    assert [r["pretrain_key"] for r in stored] == [key] * 3
    once = stored[0]["pretrain_seconds"]
    assert once > 0 and [r["pretrain_seconds"] for r in stored] == [once] * 3
    expected = [(r["train_seconds"] + once / 3) / 60 for r in stored]
    assert runs["minutes"].tolist() == pytest.approx(expected, rel=1e-9)
    assert runs["pretrain_shared_by"].tolist() == [3, 3, 3]
    with RunStore(path) as store:  # ltr train --out says so too
        from ltr.train.summary import run_summary

        assert [(run_summary(store, i)["pretrain_paid"], run_summary(store, i)["pretrain_key"]) for i in ids] == [
            (1, key), (0, key), (0, key)]


def test_the_exported_scatter_draws_every_run_the_cost_table_summarises(five_folds_three_seeds):
    """ltr export's ndcg-vs-time: a point per (fold, seed), 15 per loss here, as the cost table's mean and bars
    are over those 15 runs (before: one point per fold, the latest seed's, beside bars over all 15)."""
    from ltr.export import run_names, scatter_figure

    with RunStore(five_folds_three_seeds) as store:
        runs = in_configuration(completed_runs(store, DATA, "mlp", "shared"))
    cost = cost_effectiveness(runs)
    figure = scatter_figure(cost, runs, "t")
    points = [c.get_offsets() for c in figure.axes[0].collections if type(c).__name__ == "PathCollection"]
    assert [len(p) for p in points] == [15] * len(cost)
    for row, drawn in zip(cost.to_dict("records"), points):
        mine = runs[runs["loss"] == row["loss"]]
        assert sorted(drawn[:, 1]) == pytest.approx(sorted(mine["test_ndcg10"]))
        assert (drawn[:, 1].min(), drawn[:, 1].max()) == pytest.approx((row["ndcg_min"], row["ndcg_max"]))
    legend = figure.axes[0].get_legend()
    assert legend.get_title().get_text() == "loss (mean, bars: min-max over folds x seeds)"
    assert {t.get_text() for t in legend.get_texts()} == {f"{loss} (5 folds, 15 runs)" for loss in cost["loss"]}
    learndcg = runs[runs["loss"] == "learndcg"]  # the θ_d figures' runs: each its own name
    names = run_names(learndcg)
    assert len(set(names.values())) == 15 and names["shared-learndcg-f2-s1"] == "fold 2 · seed 1"
    assert run_names(learndcg[learndcg["seed"] == 0])["shared-learndcg-f2-s0"] == "fold 2"  # one seed: the fold


def test_the_exported_final_theta_figure_names_every_run_once_and_draws_no_label_over_another():
    """15 runs (5 folds x 3 seeds) on one drift line: runs that nearly coincide share one label naming them all
    (ltr.drift.fold_labels, as on the Results page), where one label per run was drawn over its neighbours."""
    import pandas as pd

    from ltr.export import theta_final_figure

    runs = pd.DataFrame([{"run_id": f"r{f}{s}", "loss": "learndcg", "fold": f, "seed": s}
                         for f in range(1, 6) for s in range(3)])
    steps = {f"r{f}{s}": 200 + 40 * f + s for f in range(1, 6) for s in range(3)}  # a fold's seeds nearly coincide
    diagnostic = pd.DataFrame([{"run_id": r, "parameter": "theta_d", "fold": int(r[1]), "steps": n,
                                "theta_final": 0.5 + 0.001 * n} for r, n in steps.items()])
    # as read: a long label is wrapped, a run's name held together by no-break spaces
    texts = [" ".join(a.get_text().replace("\u00a0", " ").split())
             for a in theta_final_figure(diagnostic, runs, "t").axes[0].texts]
    named = [name for text in texts for name in text.removeprefix("folds ").removeprefix("fold ").split(", ")]
    assert sorted(named) == sorted(f"{f} (seed {s})" for f in range(1, 6) for s in range(3))  # each run once
    assert texts == [f"folds {f} (seed 0), {f} (seed 1), {f} (seed 2)" for f in range(1, 6)]  # one label a fold
