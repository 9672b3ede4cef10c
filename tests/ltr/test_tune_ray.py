"""``ltr tune --executor ray``: each trial is one Ray task of the existing runner (the store actor writes its epochs
into the run store), and a pruned trial's task is cancelled mid-run: the trial's second epoch is held by the epoch
gate in the Ray worker, so the pruner's decision after epoch 0 always reaches a running task."""
from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gated_ray(tmp_path_factory):
    """A local Ray instance (2 CPUs) whose workers see the epoch gate file (their environment is the driver's
    when Ray starts); the gate lets every epoch through until a test lowers it."""
    ray = pytest.importorskip("ray")
    from core.ray_cluster import RaySettings, connect, disconnect

    gate = tmp_path_factory.mktemp("gate") / "epochs"
    gate.write_text("1000")
    saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "IRDASH_TEST_EPOCH_GATE")}
    os.environ.update(OMP_NUM_THREADS="1", IRDASH_TEST_EPOCH_GATE=str(gate))
    if ray.is_initialized():
        disconnect()
    settings = RaySettings(local_cpus=2, local_object_store_mb=200).with_overrides(executor="ray")
    try:
        connect(settings, log_to_driver=False)
        yield settings, gate
    finally:
        disconnect()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_trials_run_as_ray_tasks_and_a_pruned_one_is_cancelled_mid_run(gated_ray, tmp_path, tiny_data, monkeypatch):
    import optuna

    from ltr.store import RunStore
    from ltr.train import RunConfig
    from ltr.tune import tune_loss

    settings, gate = gated_ray
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    store = tmp_path / "runs.sqlite"
    base = RunConfig(data=tiny_data, fold=1, loss="listnet", model="mlp", epochs=2, patience=0, device="cpu")
    first = tune_loss(base, 1, store_path=store, ray_settings=settings)
    (trial,) = first.trials
    with RunStore(store) as s:
        run = s.get_run(trial["run_id"])
        curve = s.epoch_series([trial["run_id"]], ["ndcg@10"])
    assert trial["state"] == "COMPLETE" and run["status"] == "completed" and run["epochs_done"] == 2
    assert trial["value"] == pytest.approx(float(curve["value"].max()))
    study = optuna.load_study(study_name=first.study, storage=f"sqlite:///{tmp_path / 'cache' / 'tune' / 'studies.sqlite'}")
    assert sorted(study.trials[0].intermediate_values) == [0, 1]  # every epoch reported from the store

    gate.write_text("1")  # the next trial's epoch 1 waits in the Ray worker: the prune after epoch 0 finds it running
    second = tune_loss(base, 2, store_path=store, ray_settings=settings,
                       pruner=optuna.pruners.ThresholdPruner(lower=2.0))
    pruned = second.trials[1]
    assert pruned["state"] == "PRUNED"
    with RunStore(store) as s:
        run = s.get_run(pruned["run_id"])
    assert run["status"] == "cancelled" and run["epochs_done"] == 1 and run["error"].startswith("pruned by ltr tune")
