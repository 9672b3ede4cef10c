"""``ltr tune`` (issue 34, item 2): Optuna trials that are runs of the run store, resumed after a kill with no
trial lost or repeated, pruning on the per-epoch validation NDCG@10, and the tuned settings applied to a grid."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from core.paths import PROJECT_ROOT
from ltr.cli import main
from ltr.store import RunStore
from ltr.train.checkpoint import checkpoint_path

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """The study storage lives under the cache: a cache of this test's own (tiny_data is the session's)."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _tune_args(tiny_data, store, trials):
    return ["tune", "--data", tiny_data, "--fold", "1", "--losses", "approxndcg", "--trials", str(trials),
            "--epochs", "2", "--patience", "0", "--device", "cpu", "--store", str(store)]


def _load_study(name):
    import optuna

    from ltr.tune import storage_path

    return optuna.load_study(study_name=name, storage=f"sqlite:///{storage_path()}")


@pytest.mark.slow
def test_tune_resumes_after_a_kill_with_no_trial_lost_or_repeated(tmp_path, tiny_data, private_cache, capsys):
    from optuna.trial import TrialState

    store = tmp_path / "runs.sqlite"
    assert main(_tune_args(tiny_data, store, 1) + ["--json", "--quiet"]) == 0
    first = json.loads(capsys.readouterr().out)
    name = first["losses"][0]["study"]
    assert [t["number"] for t in first["losses"][0]["trials"]] == [0]

    # Trial 1 runs in a process of its own, held at the start of its second epoch by the gate (whatever the
    # machine's speed), and is killed there: SIGKILL, no chance to clean up.
    gate = tmp_path / "gate"
    gate.write_text("1")
    env = dict(os.environ, IRDASH_TEST_EPOCH_GATE=str(gate))
    proc = subprocess.Popen([sys.executable, "-m", "ltr", *_tune_args(tiny_data, store, 4)], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline, held = time.monotonic() + 180, None
        while time.monotonic() < deadline and proc.poll() is None:
            running = _load_study(name).get_trials(states=(TrialState.RUNNING,))
            if running and "run_id" in running[0].user_attrs:
                run_id = running[0].user_attrs["run_id"]
                with RunStore(store) as s:
                    epochs = s.epoch_series([run_id], ["ndcg@10"])
                    saved = checkpoint_path(s, run_id).is_file()
                # epoch 0 stored and its checkpoint written (the trainer stores an epoch first, checkpoints it
                # second: killed in between, the run restarts from scratch and never says "resuming ... after
                # epoch 0", as a fresh-clone run here once did); epoch 1 then waits at the gate
                if len(epochs) == 1 and saved:
                    held = running[0]
                    break
            time.sleep(0.2)
        assert held is not None, proc.stderr.read() if proc.poll() is not None else "trial 1 never reached the gate"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert held.number == 1
    killed_run = held.user_attrs["run_id"]
    with RunStore(store) as s:
        assert s.get_run(killed_run)["status"] == "running"  # as the killed process left it

    assert main(_tune_args(tiny_data, store, 4) + ["--json"]) == 0
    out = capsys.readouterr()
    assert "resuming trial 1" in out.err and f"resuming {killed_run} after epoch 0" in out.err
    trials = json.loads(out.out)["losses"][0]["trials"]
    assert [t["number"] for t in trials] == [0, 1, 2, 3]  # none lost, none repeated
    assert trials[1]["run_id"] == killed_run and trials[1]["params"] == held.params  # resumed with its own parameters
    assert all(t["state"] in ("COMPLETE", "PRUNED") for t in trials)
    run_ids = [t["run_id"] for t in trials]
    assert len(set(run_ids)) == 4
    with RunStore(store) as s:
        runs = s.list_runs().set_index("run_id")
        assert sorted(runs.index) == sorted(run_ids)  # every trial is one run, and no run is anything else
        for t in trials:
            assert runs.loc[t["run_id"], "status"] == ("completed" if t["state"] == "COMPLETE" else "cancelled")
        epochs = s.epoch_series([killed_run], ["ndcg@10"])
        assert sorted(epochs["epoch"]) == [0, 1]  # epoch 0 from before the kill, kept; epoch 1 after it
        finished = dict(runs["finished"])

    # A rerun finds every trial done: no new trial, no training.
    assert main(_tune_args(tiny_data, store, 4) + ["--json"]) == 0
    again = capsys.readouterr()
    assert [t["run_id"] for t in json.loads(again.out)["losses"][0]["trials"]] == run_ids
    assert "epoch" not in again.err
    with RunStore(store) as s:
        assert dict(s.list_runs().set_index("run_id")["finished"]) == finished


def test_a_pruned_trial_cancels_its_run_at_the_next_epoch(tmp_path, tiny_data, private_cache):
    """A pruner that prunes at the first report: the run stops after its first epoch (stored cancelled, one epoch
    logged of three) and the trial is PRUNED with the epoch it was pruned at."""
    import optuna

    from ltr.train import RunConfig
    from ltr.tune import tune_loss

    base = RunConfig(data=tiny_data, fold=1, loss="listnet", model="mlp", epochs=3, patience=0, device="cpu")
    result = tune_loss(base, 1, store_path=tmp_path / "runs.sqlite", pruner=optuna.pruners.ThresholdPruner(lower=2.0))
    (trial,) = result.trials
    assert trial["state"] == "PRUNED" and result.best is None
    with RunStore(tmp_path / "runs.sqlite") as s:
        run = s.get_run(trial["run_id"])
        assert run["status"] == "cancelled" and run["epochs_done"] == 1
        assert run["error"].startswith("pruned by ltr tune after epoch 0")
    frozen = _load_study(result.study).trials[0]
    with RunStore(tmp_path / "runs.sqlite") as s:
        stored = float(s.epoch_series([trial["run_id"]], ["ndcg@10"])["value"].iloc[0])
    assert frozen.user_attrs["pruned_at_epoch"] == 0 and frozen.intermediate_values == {0: pytest.approx(stored)}


def test_tuned_settings_apply_to_a_grid_per_loss(tmp_path, capsys):
    from ltr.grid import expand_grid
    from ltr.tune import LossTuning, apply_tuned, search_space, tuned_grid

    tuned = [LossTuning("approxndcg", "s1", [], {"number": 3, "value": 0.5,
                                               "params": {"lr": 0.004, "batch_size": 32, "loss_params.alpha": 2.5},
                                               "config": {"lr": 0.004, "batch_size": 32, "loss_lr": 0.004}}),
             LossTuning("learndcg", "s2", [], {"number": 1, "value": 0.6, "params": {"lr": 0.002, "batch_size": 16,
                                                                                    "loss_lr": 0.05},
                                               "config": {"lr": 0.002, "batch_size": 16, "loss_lr": 0.05}})]
    fragment = tuned_grid(tuned)
    assert fragment["overrides"]["loss"]["approxndcg"] == {"lr": 0.004, "batch_size": 32}  # no loss_lr: fixed loss
    assert fragment["overrides"]["loss"]["learndcg"]["loss_lr"] == 0.05
    assert "loss_params.alpha" in search_space("approxndcg") and "loss_lr" in search_space("learndcg")
    spec = {"name": "g", "data": ["synthetic-mq2008"], "folds": [1], "losses": ["approxndcg", "learndcg", "ranknet"],
            "models": ["mlp"], "seeds": [0, 1], "train": {"lr": 0.001, "batch_size": 64},
            "loss_params": {"learndcg": {"normalisation": "standard"}}}
    configs = {(c.loss, c.seed): c for c in expand_grid(apply_tuned(spec, {"grid": fragment})).configs}
    assert configs["approxndcg", 1].lr == 0.004 and configs["approxndcg", 1].loss_params == {"alpha": 2.5}
    assert configs["learndcg", 0].batch_size == 16 and configs["learndcg", 0].loss_params == {"normalisation": "standard"}
    assert configs["ranknet", 0].lr == 0.001 and configs["ranknet", 0].batch_size == 64  # not tuned: the grid's
    # the CLI: `ltr grid --tuned FILE` with a document `ltr tune --out` writes; a malformed one is refused
    doc = tmp_path / "tuned.json"
    doc.write_text(json.dumps({"losses": [], "grid": fragment}))
    grid_args = ["grid", "--data", "synthetic-mq2008", "--folds", "1", "--losses", "approxndcg", "--models", "mlp",
                 "--store", str(tmp_path / "runs.sqlite"), "--dry-run", "--json"]
    assert main(grid_args + ["--tuned", str(doc)]) == 0
    tuned_ids = json.loads(capsys.readouterr().out)["to_run"]
    assert main(grid_args) == 0
    assert json.loads(capsys.readouterr().out)["to_run"] != tuned_ids  # other lr and alpha: another run
    doc.write_text("[1, 2]")
    assert main(grid_args + ["--tuned", str(doc)]) == 2
    assert "not an `ltr tune --out` document" in capsys.readouterr().err


def test_bad_input_starts_no_trial(tmp_path, tiny_data, private_cache, capsys):
    args = ["tune", "--data", tiny_data, "--fold", "1", "--trials", "2", "--store", str(tmp_path / "runs.sqlite")]
    assert main(args + ["--losses", "nosuchloss"]) == 2
    assert "unknown loss 'nosuchloss'" in capsys.readouterr().err
    assert main(args) == 2  # a neural model needs its losses named
    assert "--losses: required for a neural model" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse: the flag and its rule
        main(args + ["--losses", "listnet", "--trials", "0"])
    assert refused.value.code == 2 and "argument --trials: expected an integer >= 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "runs.sqlite").exists()  # refused before the store was opened


def test_every_study_draws_its_own_points(tmp_path, tiny_data, private_cache):
    """Issue 41: the sampler was seeded by the trial number alone, so trial k of every study (any loss, any fold)
    drew the same learning rate and batch size: 50 studies held 6 distinct (lr, batch) pairs. Seeded by the study
    (loss, fold, fixed settings, sampler seed) and the trial number, no two studies share a point; what ran
    (trials, sampler and its start-up count, cost) is read from the study."""
    from ltr import tune
    from ltr.train import RunConfig
    from ltr.tune import tune_loss

    results = [tune_loss(RunConfig(data=tiny_data, fold=fold, loss=loss, model="mlp", epochs=1, patience=0,
                                   device="cpu"), 2, store_path=tmp_path / "runs.sqlite")
               for loss, fold in (("listnet", 1), ("listnet", 2), ("ranknet", 1))]
    points = [(t["params"]["lr"], t["params"]["batch_size"]) for r in results for t in r.trials]
    assert len(points) == 6 and len({lr for lr, _batch in points}) == 6, points
    for result in results:
        assert result.n_trials == 2 and result.states["COMPLETE"] + result.states["PRUNED"] == 2
        assert result.sampler["name"] == "TPESampler" and result.sampler["n_startup_trials"] == tune.N_STARTUP_TRIALS
        assert result.wall_seconds > 0 and result.cpu_seconds > 0 and result.runs_train_seconds > 0
    again = tune_loss(RunConfig(data=tiny_data, fold=1, loss="listnet", model="mlp", epochs=1, patience=0,
                                device="cpu"), 2, store_path=tmp_path / "runs.sqlite")
    assert again.trials == results[0].trials  # the same study: nothing new ran
    assert again.wall_seconds >= results[0].wall_seconds  # its account grows by the (short) look-up session


def test_lambdamart_is_tuned_over_its_tree_settings(tmp_path, tiny_data, private_cache, capsys):
    """LambdaMART's study (issue 41): LightGBM's num_leaves, learning_rate, min_data_in_leaf, feature and bagging
    fractions, up to 1,000 trees with early stopping 50 rounds after the best validation NDCG@10; its best
    settings go into a grid as the tree ranker's model parameters."""
    from ltr.grid import expand_grid
    from ltr.tune import GBDT_PARAMETERS, GBDT_PATIENCE, GBDT_ROUNDS, LossTuning, apply_tuned, tuned_grid

    store = tmp_path / "runs.sqlite"
    assert main(["tune", "--data", tiny_data, "--fold", "1", "--model", "lambdamart", "--trials", "2",
                 "--store", str(store), "--json", "--quiet"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["losses"]
    assert result["loss"] == "lambdamart" and result["n_trials"] == 2
    assert set(result["space"]) == {f"model_params.{k}" for k in GBDT_PARAMETERS} | {"fixed"}
    with RunStore(store) as s:
        for trial in result["trials"]:
            config = s.get_run(trial["run_id"])["config"]
            assert (config["epochs"], config["patience"]) == (GBDT_ROUNDS, GBDT_PATIENCE)
            assert {f"model_params.{k}": v for k, v in config["model_params"].items() if k in GBDT_PARAMETERS} \
                == trial["params"]
            assert config["model_params"]["bagging_freq"] == 1
    points = {tuple(sorted(t["params"].items())) for t in result["trials"]}
    assert len(points) == 2
    spec = {"name": "g", "data": [tiny_data], "folds": [1], "losses": ["listnet"], "models": ["lambdamart"], "seeds": [1],
            "train": {"epochs": 100, "patience": 10}}
    with RunStore(store) as s:
        best = s.get_run(result["best"]["run_id"])["config"]
    tuning = LossTuning(result["loss"], result["study"], result["trials"], result["best"], model=result["model"])
    (config,) = expand_grid(apply_tuned(spec, {"grid": tuned_grid([tuning])})).configs
    assert config.model == "lambdamart" and config.model_params == best["model_params"]
    assert (config.epochs, config.patience) == (GBDT_ROUNDS, GBDT_PATIENCE)


def test_studies_tune_on_two_workers(tmp_path, tiny_data, private_cache, capsys):
    """``--workers 2``: two studies at once, each in a process of its own, reported in the order asked."""
    store = tmp_path / "runs.sqlite"
    assert main(["tune", "--data", tiny_data, "--fold", "1", "--losses", "listnet", "ranknet", "--trials", "1",
                 "--epochs", "1", "--device", "cpu", "--store", str(store), "--workers", "2", "--json", "--quiet"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [r["loss"] for r in document["losses"]] == ["listnet", "ranknet"] and document["workers"] == 2
    with RunStore(store) as s:
        runs = s.list_runs().set_index("run_id")
    ran = runs.loc[[r["trials"][0]["run_id"] for r in document["losses"]]]
    assert set(ran["status"]) <= {"completed", "cancelled"}
    assert os.getpid() not in set(ran["pid"])  # trained in the workers, not here


def test_studies_opened_at_once_on_a_new_storage_open_it_one_at_a_time(private_cache, monkeypatch):
    """Two studies opened at the same moment on a storage file that does not exist yet (the MQ2008 reproduction's two
    tuning workers at its start) both stamped the new file's schema and one died on alembic_version's UNIQUE
    constraint; opening the storage is now one process (or thread) at a time, so both studies open."""
    import threading

    import optuna

    from ltr.tune import _open_study

    real, barrier, active, peak = optuna.storages.RDBStorage, threading.Barrier(2), [0], [0]
    lock = threading.Lock()

    class AtOnce(real):  # holds each opener until the other arrives (or a second has passed)
        def __init__(self, *args, **kwargs):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            try:
                barrier.wait(1)
            except threading.BrokenBarrierError:
                pass
            try:
                super().__init__(*args, **kwargs)
            finally:
                with lock:
                    active[0] -= 1

    monkeypatch.setattr(optuna.storages, "RDBStorage", AtOnce)
    opened, errors = [], []

    def open_one(name):
        try:
            opened.append(_open_study(name, pruner=optuna.pruners.NopPruner()).study_name)
        except Exception as exc:  # the race's IntegrityError, kept to show
            errors.append(exc)

    threads = [threading.Thread(target=open_one, args=(f"study-{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and sorted(opened) == ["study-0", "study-1"] and peak[0] == 1
