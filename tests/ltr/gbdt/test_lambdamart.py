"""LambdaMART (LightGBM's lambdarank objective) as a run like every other: stored per-query test NDCG under the
project's convention, train and CPU seconds, LightGBM's version and parameters; its inputs checked; in grids."""
from __future__ import annotations

import numpy as np
import pytest

from ltr.grid import expand_grid
from ltr.ndcg_conventions import N_RELEVANT, NDCG_CUTOFFS, metric_name
from ltr.store import RunStore
from ltr.train import RunConfig, RunInputError, prepare_run, train_run

pytestmark = pytest.mark.usefixtures("one_thread")


def _ndcg_at_10(scores: np.ndarray, labels: np.ndarray) -> float:
    """Plain NDCG@10 of one query (gain 2^y - 1, log2 discount, ties by document order, no relevant -> 1)."""
    def dcg(order):
        gains = 2.0 ** labels[order][:10] - 1
        return float((gains / np.log2(np.arange(2, gains.size + 2))).sum())
    ideal = dcg(np.argsort(-labels, kind="stable"))
    return 1.0 if ideal == 0 else dcg(np.argsort(-scores, kind="stable")) / ideal


@pytest.mark.slow  # ~4 s on a busy machine, most of it importing LightGBM (and scikit-learn)
def test_a_lambdamart_run_is_stored_like_every_other(tiny_data, tmp_path):
    config = RunConfig(data=tiny_data, fold=1, loss="lambdamart", model="lambdamart", epochs=8, patience=3,
                       model_params={"num_leaves": 7, "min_data_in_leaf": 5})
    with RunStore(tmp_path / "runs.sqlite") as store:
        result = train_run(config, store)
        run = store.get_run(result.run_id)
        again = train_run(config, store)  # a completed run is looked up, not trained again
        epochs = store.epoch_series([result.run_id])
    assert result.run_id.startswith("mq2008-like-f1-lambdamart-lambdamart-")
    assert run["status"] == "completed" and run["train_seconds"] > 0 and run["cpu_seconds"] > 0
    assert not again.retrained
    lightgbm = run["config"]["lightgbm"]
    assert lightgbm["version"] and lightgbm["parameters"]["objective"] == "lambdarank"
    assert lightgbm["parameters"]["num_leaves"] == 7 and lightgbm["parameters"]["seed"] == 0
    per_query = result.summary["test_per_query"]
    assert set(per_query) == {f"ndcg@{k}" for k in NDCG_CUTOFFS}
    assert 0 <= run["best_epoch"] < run["epochs_done"] <= 8
    assert set(epochs["name"]) >= {"ndcg@10", "seconds", "cpu_seconds"}
    # per-query values under the project's convention, and the relevant-document counts the report reads
    with RunStore(tmp_path / "runs.sqlite") as store:
        names = set(store.conn.execute("SELECT DISTINCT metric FROM query_results WHERE run_id = ?",
                                       (result.run_id,)).fetchall()[i][0] for i in range(len(NDCG_CUTOFFS) + 1))
    assert names == {metric_name(k) for k in NDCG_CUTOFFS} | {N_RELEVANT}


@pytest.mark.parametrize("values, match", [
    ({"loss": "ranknet"}, "its loss is 'lambdamart'"),
    ({"lr": 0.05}, "lr does not apply"),
    ({"batch_size": 16}, "batch_size does not apply"),
    ({"loss_params": {"sigma": 1}}, "no loss parameters"),
])
def test_settings_that_do_not_apply_to_lambdamart_are_refused(tiny_data, values, match):
    with pytest.raises(RunInputError, match=match):
        RunConfig(**{"data": tiny_data, "fold": 1, "loss": "lambdamart", "model": "lambdamart", **values})


def test_the_lambdarank_objective_is_not_a_loss_of_a_neural_ranker(tiny_data):
    with pytest.raises(RunInputError, match="--model lambdamart"):
        RunConfig(data=tiny_data, fold=1, loss="lambdamart", model="mlp")


def test_an_unknown_lightgbm_parameter_is_named(tiny_data):
    with pytest.raises(RunInputError, match="num_leafs"):
        prepare_run(RunConfig(data=tiny_data, fold=1, loss="lambdamart", model="lambdamart",
                              model_params={"num_leafs": 7}))


def test_a_grid_runs_lambdamart_once_per_fold_and_seed_with_its_own_settings(tiny_data):
    grid = expand_grid({"data": [tiny_data], "folds": [1, 2], "losses": ["ranknet", "listnet"],
                        "models": ["mlp", "lambdamart"], "seeds": [0, 1],
                        "train": {"epochs": 20, "lr": 0.01, "batch_size": 16, "patience": 4},
                        "model_params": {"lambdamart": {"learning_rate": 0.05}}})
    trees = [c for c in grid.configs if c.model == "lambdamart"]
    assert len([c for c in grid.configs if c.model == "mlp"]) == 2 * 2 * 2
    assert sorted((c.fold, c.seed) for c in trees) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert all(c.loss == "lambdamart" and c.lr == 1e-3 and c.batch_size == 64 and c.epochs == 20
               and c.patience == 4 and c.model_params == {"learning_rate": 0.05} for c in trees)


@pytest.mark.slow
def test_lambdamart_on_mq2008_fold1_matches_lightgbm_trained_directly(shared_dir, tmp_path):
    """The run (our store, our NDCG code) against LightGBM called directly with the same parameters, its own
    early stopping on validation NDCG@10, and a plain NDCG@10 of its test predictions: within 0.01."""
    import lightgbm as lgb

    from ltr.data.datasets import load_fold
    from ltr.gbdt.lambdamart import booster_parameters

    data = str(shared_dir / "data" / "letor" / "MQ2008")
    config = RunConfig(data=data, fold=1, loss="lambdamart", model="lambdamart", epochs=40, patience=10,
                       model_params={"learning_rate": 0.1, "num_leaves": 15})
    with RunStore(tmp_path / "runs.sqlite") as store:
        result = train_run(config, store)
        best_round = store.get_run(result.run_id)["best_epoch"]
    train, vali, test = (load_fold(data, 1, s) for s in ("train", "vali", "test"))

    def dataset(ds, reference=None):
        return lgb.Dataset(ds.features, label=ds.labels, group=np.diff(ds.query_ptr), reference=reference)
    params = {**booster_parameters(config), "eval_at": [10], "num_threads": 1}
    train_set = dataset(train)
    booster = lgb.train(params, train_set, num_boost_round=40, valid_sets=[dataset(vali, train_set)],
                        callbacks=[lgb.early_stopping(10, verbose=False)])
    scores = booster.predict(test.features, num_iteration=booster.best_iteration)
    ptr = test.query_ptr
    direct = np.mean([_ndcg_at_10(scores[a:b], test.labels[a:b]) for a, b in zip(ptr[:-1], ptr[1:])])
    print(f"lambdamart run ndcg@10 {result.summary['test']['ndcg@10']:.4f} (best round {best_round}), "
          f"LightGBM directly {direct:.4f} (best iteration {booster.best_iteration})")
    assert best_round + 1 == booster.best_iteration
    assert abs(result.summary["test"]["ndcg@10"] - direct) < 0.01


@pytest.mark.slow
def test_a_cancel_request_stops_a_lambdamart_run_as_cancelled(tiny_data, tmp_path):
    import threading

    from ltr.train import RunCancelled

    cancel = threading.Event()
    cancel.set()
    config = RunConfig(data=tiny_data, fold=1, loss="lambdamart", model="lambdamart", epochs=50, patience=0)
    with RunStore(tmp_path / "runs.sqlite") as store:
        with pytest.raises(RunCancelled):
            train_run(config, store, cancel=cancel)
        run = store.get_run(config.run_id)
    assert run["status"] == "cancelled" and run["epochs_done"] == 0
