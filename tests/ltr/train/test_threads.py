"""CPU threads chosen from the free cores (core.threads), applied by every torch user, recorded with
each training run; and the busy-machine defect it fixes: beside CPU-bound processes, torch's default
threads made a run 10-30x slower than one thread, so train_seconds measured the contention."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from core import threads
from ltr.store import RunStore
from tests.ltr.support import split_letor_by_query

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/ltr/conftest.py


@pytest.fixture
def machine(monkeypatch):
    """A machine of ``cores`` cores whose load average and runnable tasks the test sets (no CPU quota,
    whatever container the tests run in)."""
    monkeypatch.delenv(threads.TORCH_THREADS_ENV, raising=False)
    monkeypatch.delenv(threads.WORKERS_ENV, raising=False)
    state = {"cores": 8, "avg": 0.0, "now": 0.0}
    monkeypatch.setattr(threads, "cgroup_cpu_quota", lambda: None)
    monkeypatch.setattr(threads, "usable_cores", lambda: state["cores"])
    monkeypatch.setattr(os, "getloadavg", lambda: (state["avg"], 0.0, 0.0))
    monkeypatch.setattr(threads, "runnable_others", lambda: state["now"])
    threads.forget_torch_choice()
    yield state
    threads.forget_torch_choice()


def test_threads_are_the_free_cores_shared_by_the_workers(machine):
    assert threads.choose_threads().threads == 8  # a quiet machine: every core
    machine["avg"] = 2.0
    assert threads.choose_threads().threads == 6  # two cores busy
    machine["avg"] = 20.0
    assert threads.choose_threads().threads == 1  # a busy machine: one thread, never zero
    machine["avg"] = 0.0
    assert threads.choose_threads(workers=2).threads == 4  # a grid of two workers: half each
    assert threads.choose_threads(workers=3, at_most=2).threads == 2  # a Ray task of 2 CPUs
    machine["avg"] = 5.0
    assert threads.choose_threads(workers=2).threads == 3  # fewer than the share when the load leaves fewer
    choice = threads.choose_threads(workers=2)
    assert (choice.cores, choice.load, choice.workers, choice.source) == (8, 5.0, 2, "chosen")
    assert "3 thread(s) of 8 core(s) at load 5.00, 2 workers" in choice.describe()


def test_a_job_that_just_started_counts_before_the_load_average_sees_it(machine):
    """Two CPU-bound processes started a second ago: the 1-minute average still reads 0.1, but they
    are runnable now, and a run started beside them must not take their cores."""
    machine["cores"], machine["avg"], machine["now"] = 2, 0.1, 2.0
    assert threads.choose_threads().threads == 1


def test_batched_encoding_keeps_the_workers_share_whatever_the_load(machine, monkeypatch):
    """Dense retrieval and BERTScore encode whole batches: bench_busy measured two threads faster than one
    beside two CPU-bound processes on 2 cores, so their count does not shrink with the load (a training
    step's does), and the load it ran under is still recorded."""
    machine["cores"], machine["avg"], machine["now"] = 2, 2.0, 2.0
    assert threads.choose_threads().threads == 1  # a training step on a busy machine
    encoder = threads.encoder_choice()
    assert (encoder.threads, encoder.load, encoder.counts_load) == (2, 2.0, False)
    assert "load not counted" in encoder.describe()
    assert threads.encoder_choice() is encoder  # once per process, like the training choice
    threads.forget_torch_choice()
    monkeypatch.setenv(threads.WORKERS_ENV, "2")
    assert threads.encoder_choice().threads == 1  # still one worker's share of the cores
    threads.forget_torch_choice()
    monkeypatch.setenv(threads.TORCH_THREADS_ENV, "3")
    assert threads.encoder_choice().threads == 3


def test_dense_and_bertscore_record_the_encoding_threads(machine):
    from pipeline.llm.cpu import encoder_threads, encoder_threads_record
    import torch

    machine["cores"], machine["avg"] = 2, 5.0
    before = torch.get_num_threads()
    with encoder_threads():
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == before
    assert encoder_threads_record()["threads"] == 2 and encoder_threads_record()["counts_load"] is False


def test_the_environment_overrides_and_a_bad_value_is_named(machine, monkeypatch):
    monkeypatch.setenv(threads.TORCH_THREADS_ENV, "3")
    machine["avg"] = 50.0
    choice = threads.choose_threads()
    assert (choice.threads, choice.source) == (3, threads.TORCH_THREADS_ENV)
    monkeypatch.setenv(threads.TORCH_THREADS_ENV, "many")
    with pytest.raises(ValueError, match=r"IRDASH_TORCH_THREADS='many': expected a whole number"):
        threads.choose_threads()
    monkeypatch.delenv(threads.TORCH_THREADS_ENV)
    monkeypatch.setenv(threads.WORKERS_ENV, "2")
    machine["avg"] = 0.0
    assert threads.choose_threads().workers == 2 and threads.choose_threads().threads == 4


def test_torch_threads_are_chosen_once_per_process_and_applied(machine):
    import torch

    before = torch.get_num_threads()
    try:
        machine["cores"] = 2
        first = threads.apply_torch_threads()
        assert first.threads == 2 and torch.get_num_threads() == 2
        machine["avg"] = 9.0  # the load rose: this process keeps its threads (one quantity per process)
        torch.set_num_threads(1)  # a library changed the count: applied again
        assert threads.apply_torch_threads() is first and torch.get_num_threads() == 2
        with threads.using_torch_threads(1):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_a_long_lived_host_chooses_its_threads_again_for_each_run(machine, tiny_data, tmp_path):
    """The dashboard's trainer host and the grid's run many runs in one process: it kept the threads chosen
    at its first run forever (one thread for its life if it started on a busy machine). Each run now
    chooses from the machine as it is at its start, and records what it chose."""
    import torch

    from ltr.train import RunConfig
    from ltr.train.inprocess import FoldCache, train_one

    before = torch.get_num_threads()
    machine["cores"], machine["avg"] = 2, 5.0  # busy when the host starts: one thread
    configs = [RunConfig(data=tiny_data, fold=1, loss="listnet", model="mlp", epochs=1, patience=0, device="cpu",
                         seed=seed) for seed in (31, 32)]
    folds = FoldCache()
    try:
        with RunStore(tmp_path / "runs.sqlite") as store:
            assert train_one(configs[0], store, folds=folds).status == "completed"
            machine["avg"] = 0.0  # the machine went quiet: the next run takes both cores
            assert train_one(configs[1], store, folds=folds).status == "completed"
            recorded = [(store.get_run(c.run_id)["threads"], store.get_run(c.run_id)["load_at_start"]) for c in configs]
    finally:
        torch.set_num_threads(before)
    assert [n for n, _ in recorded] == [1, 2]


def test_a_thread_count_that_is_not_a_count_is_bad_input_and_stores_nothing(machine, tiny_data, tmp_path,
                                                                              monkeypatch):
    from ltr.train import RunConfig
    from ltr.train.inprocess import FoldCache, train_one

    monkeypatch.setenv(threads.TORCH_THREADS_ENV, "many")
    config = RunConfig(data=tiny_data, fold=1, loss="listnet", model="mlp", epochs=1, device="cpu")
    with RunStore(tmp_path / "runs.sqlite") as store:
        outcome = train_one(config, store, folds=FoldCache())
        assert store.find_run(config.run_id) is None
    assert (outcome.status, outcome.exit_code) == ("bad input", 2)
    assert "IRDASH_TORCH_THREADS='many': expected a whole number of threads" in outcome.message


def test_a_ray_task_takes_at_most_its_cpus_on_cuda_too(machine, tmp_path, monkeypatch):
    """A CUDA Ray task skipped the task's CPU limit and took the whole node's free cores; each task of a
    reused Ray worker now chooses at most its CPUs, on either device."""
    import torch

    import ltr.train.inprocess as inprocess
    from ltr.ray_runner import train_task
    from ltr.train import RunConfig, RunInputError

    chosen = []

    def prepare_and_stop(config, splits=None):  # what the run would train on; no GPU needed past here
        chosen.append((config.device, threads.torch_choice().threads, torch.get_num_threads()))
        raise RunInputError("stopped by the test after the thread choice")

    monkeypatch.setattr(inprocess, "prepare_run", prepare_and_stop)
    before = torch.get_num_threads()
    machine["cores"] = 8  # a quiet 8-core node
    config = dataclasses.asdict(RunConfig(data="synthetic-mq2008", fold=1, loss="listnet", model="mlp"))
    try:
        for use_cuda, cpus in ((True, 2), (False, 3), (True, 1)):
            out = train_task(config, None, str(tmp_path / "ckpt"), use_cuda=use_cuda, threads=cpus)
            assert out["status"] == "bad input", out
    finally:
        torch.set_num_threads(before)
    assert chosen == [("cuda", 2, 2), ("cpu", 3, 3), ("cuda", 1, 1)]


def test_each_training_run_records_its_threads(tiny_data, tmp_path, one_thread):
    from ltr.train import RunConfig, train_run

    config = RunConfig(data=tiny_data, fold=1, loss="listnet", model="mlp", epochs=1, patience=0, device="cpu")
    with RunStore(tmp_path / "runs.sqlite") as store:
        train_run(config, store)
        run = store.get_run(config.run_id)
    assert run["threads"] == 1 and run["load_at_start"] is not None


def test_a_store_made_before_the_threads_column_opens_and_records_them(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    with RunStore(path) as store:
        store.register_run("r1", {"data": "d", "fold": 1, "loss": "listnet", "model": "mlp"}, total_epochs=1)
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE runs DROP COLUMN threads")  # as the previous release wrote it
    conn.execute("DROP TABLE schema_migrations")  # nor did it record versions
    conn.commit()
    conn.close()
    with RunStore(path) as store:
        assert store.get_run("r1")["threads"] is None
        store.start_run("r1", device="cpu", threads=2)
        assert store.get_run("r1")["threads"] == 2


# --------------------------------------------------------------------------- the busy machine
def _burners(n: int) -> list[subprocess.Popen]:
    """``n`` CPU-bound processes (a Python busy loop each), as another user's jobs would be."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _grid_seconds(folder, losses, store, env_threads: str | None, monkeypatch) -> dict[str, tuple[float, int]]:
    """``{loss: (train_seconds, threads)}`` of a one-host grid (the dashboard's and the CLI's trainer host)."""
    from ltr.grid import expand_grid, run_grid

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # torch's default in the host, as a user has it
    if env_threads is None:
        monkeypatch.delenv(threads.TORCH_THREADS_ENV, raising=False)
    else:  # pinned both ways: torch's own variable too, so the reference holds for any trainer version
        monkeypatch.setenv(threads.TORCH_THREADS_ENV, env_threads)
        monkeypatch.setenv("OMP_NUM_THREADS", env_threads)
    spec = {"name": "busy", "data": [str(folder)], "folds": [1], "losses": losses, "models": ["mlp"],
            "train": {"epochs": 8, "batch_size": 16, "patience": 0, "device": "cpu"}}
    outcome = run_grid(expand_grid(spec), store, workers=1, devices=["cpu"], progress=False, force=True)
    assert not outcome.failed, outcome.failed
    with RunStore(store) as s:
        runs = s.list_runs()
    return {r["loss"]: (float(r["train_seconds"]), int(r["threads"])) for r in runs.to_dict("records")}


@pytest.mark.slow
def test_beside_cpu_bound_processes_a_grid_trains_at_one_threads_speed_in_either_order(shared_dir, tmp_path,
                                                                                        monkeypatch):
    """The new user's walk: LearnDCG and ApproxNDCG on one trainer host showed train_seconds ten times
    apart. The cause was contention: at torch's default threads (one per core) beside other work an
    epoch took 0.07 s or 1.6 s depending on what else ran, 10-30x the one-thread time. With as many
    CPU-bound processes as cores beside it, each run of ``[approxndcg, learndcg]`` and of the reversed
    grid takes at most 3x the same run pinned to one thread, and the two runs are within 3x."""
    source = shared_dir / "data" / "letor" / "mq2008_fold1_test.txt"
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    folder = split_letor_by_query(source, tmp_path / "mq2008-sample")  # 94 training queries in fold 1
    procs = _burners(threads.usable_cores())
    try:
        pinned = _grid_seconds(folder, ["approxndcg", "learndcg"], tmp_path / "one.sqlite", "1", monkeypatch)
        forward = _grid_seconds(folder, ["approxndcg", "learndcg"], tmp_path / "a.sqlite", None, monkeypatch)
        backward = _grid_seconds(folder, ["learndcg", "approxndcg"], tmp_path / "b.sqlite", None, monkeypatch)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for order in (forward, backward):
        seconds = {loss: s for loss, (s, _) in order.items()}
        assert max(seconds.values()) <= 3 * min(seconds.values()), (order, pinned)
        for loss, (s, n) in order.items():
            assert s <= 3 * pinned[loss][0] + 0.5, (loss, order, pinned)  # + 0.5 s: timer noise on tiny runs
            assert n == 1, order  # every core was busy: one thread chosen


def test_the_results_scatter_plots_what_ltr_runs_prints(tmp_path, capsys):
    """The Results page's fold points sit at ``python -m ltr runs``' minutes for the same runs: train_seconds +
    the run's share of its pre-training (here a run whose surrogate key is not recorded: all of it, as before),
    and the axis title says what it measures."""
    from ltr.cli import main
    from ltr.train import RunConfig
    from ltr.views import results as views

    store_path = tmp_path / "runs.sqlite"
    seconds = {"approxndcg": (4.25, None), "neuralloss": (3.5, 30.0)}
    with RunStore(store_path) as store:
        for loss, (train, pretrain) in seconds.items():
            config = RunConfig(data="synthetic-mq2008", fold=1, loss=loss, model="mlp")
            store.register_run(config.run_id, config.result_config(), total_epochs=1)
            store.start_run(config.run_id, device="cpu", threads=1)
            store.finish_run(config.run_id, test_means={"ndcg@10": 0.5}, per_query={}, train_seconds=train,
                             pretrain_seconds=pretrain, best_epoch=0, cpu_seconds=train)
        runs = views.completed_runs(store, "synthetic-mq2008", "mlp")
        figure = views.cost_figure(views.cost_effectiveness(runs), 10, title="t", runs=runs)
    assert main(["runs", "--store", str(store_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    printed = {}
    assert lines[-1].startswith("minutes: ")  # the convention, named under the table
    for line in lines[1:-1]:
        row = dict(zip(header, line.split()))
        printed[row["run_id"]] = float(row["minutes"]) * 60
        pretrain = 0.0 if row["pretrain_seconds"] == "NaN" else float(row["pretrain_seconds"])
        assert printed[row["run_id"]] == pytest.approx(float(row["train_seconds"]) + pretrain, abs=0.01)
        assert row["threads"] == "1"
    plotted = {}
    for trace in figure.data:
        if trace.name.endswith("(folds)"):
            loss = trace.name.split()[0]
            plotted[loss] = float(trace.x[0]) * 60
    by_loss = dict(zip(runs["loss"], runs["run_id"]))
    # printed minutes carry 6 significant digits: equal to the plotted ones within 1 ms
    assert plotted == pytest.approx({loss: printed[by_loss[loss]] for loss in plotted}, abs=1e-3)
    assert plotted == pytest.approx({"approxndcg": 4.25, "neuralloss": 33.5})
    assert figure.layout.xaxis.title.text == views.X_AXIS_TITLE and "training loop only" in views.X_AXIS_TITLE
