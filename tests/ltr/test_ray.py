"""Runs on a real local Ray instance (2 CPUs, started and shut down by this module): a worker killed
mid-run resumes from its shared checkpoint with the uninterrupted result, live step metrics through
the store actor, a grid surviving a deterministically failing run, re-submission skipping what is done."""
from __future__ import annotations

import functools
import os
import signal
import threading
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from core.ray_cluster import RaySettings  # noqa: E402
from ltr.grid import Grid  # noqa: E402
from ltr.store import RunStore  # noqa: E402
from ltr.train import RunConfig, run_summary, train_run  # noqa: E402
from tests.support.paths import APP  # noqa: E402
from tests.support.waiting import wait_until  # noqa: E402

pytestmark = pytest.mark.slow
# Live step metrics arrive within a fraction of a second: watch closely, and give Ray tasks two minutes.
_wait = functools.partial(wait_until, timeout=120.0, poll=0.02)


def _config(data: str, **kw) -> RunConfig:
    values = dict(data=data, fold=1, loss="learndcg", model="mlp", epochs=3, batch_size=8, lr=0.01, patience=0,
                  device="cpu", experiment="ray-test")
    return RunConfig(**{**values, **kw})


def _settings(tmp_path: Path, **kw) -> RaySettings:
    return RaySettings(executor="ray", cpus_per_run=1, max_retries=2,
                       checkpoint_dir=f"file://{tmp_path / 'shared-ckpt'}", **kw)


class Driver(threading.Thread):
    """``run_grid_ray`` in a thread, so the test can watch the store and kill workers meanwhile."""

    def __init__(self, grid, store_path, settings):
        super().__init__(daemon=True)
        self.args, self.outcome, self.error = (grid, store_path, settings), None, None

    def run(self):
        from ltr.ray_runner import run_grid_ray

        try:
            self.outcome = run_grid_ray(*self.args, progress=False, say=lambda msg: None)
        except BaseException as exc:  # noqa: BLE001 (re-raised in the test thread)
            self.error = exc

    def result(self, timeout=240):
        self.join(timeout)
        assert not self.is_alive(), "the Ray grid did not finish"
        if self.error is not None:
            raise self.error
        return self.outcome


def _comparable(summary: dict) -> dict:
    """A run's results without its timings (wall and CPU seconds per epoch)."""
    return {"test_per_query": summary["test_per_query"], "test": summary["test"],
            "validation": [{k: v for k, v in e.items() if k not in ("seconds", "train_seconds", "cpu_seconds")}
                           for e in summary["validation"]],
            "loss_parameters": summary["loss_parameters"], "train_loss": summary["train_loss"],
            "best_epoch": summary["best_epoch"], "epochs_done": summary["epochs_done"]}


def test_killed_worker_resumes_from_its_checkpoint_with_the_uninterrupted_result(ray_cluster, tiny_data, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    victim = _config(tiny_data, fold=1, epochs=30)
    other = _config(tiny_data, fold=2, epochs=3)
    store_path = tmp_path / "store" / "runs.sqlite"
    settings = _settings(tmp_path)
    driver = Driver(Grid("kill-test", [victim, other]), store_path, settings)
    driver.start()
    shared = tmp_path / "shared-ckpt" / f"{victim.run_id}.pt"
    _wait(shared.exists, what="the victim's first checkpoint in the shared location")
    with RunStore(store_path) as store:
        run = store.get_run(victim.run_id)
    assert run["status"] == "running" and run["pid"] != os.getpid()
    os.kill(run["pid"], signal.SIGKILL)  # the Ray worker process training it
    outcome = driver.result()

    assert sorted(outcome.completed) == sorted([victim.run_id, other.run_id]) and not outcome.failed
    assert outcome.retries == {victim.run_id: 1}
    assert 1 <= outcome.resumed[victim.run_id] < victim.epochs  # resumed from a checkpoint, not from scratch
    assert outcome.placement[victim.run_id].split(":")[1] != str(run["pid"])
    assert not shared.exists()  # a completed run's checkpoint is removed

    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    with RunStore(tmp_path / "reference" / "runs.sqlite") as ref_store:
        reference = train_run(victim, ref_store).summary
    with RunStore(store_path) as store:
        resumed = run_summary(store, victim.run_id)
    assert resumed["status"] == "completed" and resumed["epochs_done"] == victim.epochs
    assert _comparable(resumed) == _comparable(reference)


def test_live_step_metrics_of_a_ray_task_through_the_store_read_api(ray_cluster, tiny_data, tmp_path):
    config = _config(tiny_data, epochs=25, log_every=1, flush_every=4)
    store_path = tmp_path / "runs.sqlite"
    driver = Driver(Grid("live-test", [config]), store_path, _settings(tmp_path))
    driver.start()
    seen_while_running = []
    with RunStore(store_path) as store:
        def observe():
            run = store.find_run(config.run_id)
            if run is None or run["status"] != "running":
                return run is not None and run["status"] == "completed"
            n = len(store.step_series([config.run_id], ["theta_d"], max_points=10**9))
            if n and (not seen_while_running or n > seen_while_running[-1]):
                seen_while_running.append(n)
            return False

        _wait(observe, what="the run to complete")
        outcome = driver.result()
        final = len(store.step_series([config.run_id], ["theta_d"], max_points=10**9))
        run = store.get_run(config.run_id)
    assert outcome.completed == [config.run_id]
    # The trajectory grew in the store while the remote task was still training.
    assert len(seen_while_running) >= 3 and seen_while_running[0] < final, (seen_while_running, final)
    assert run["pid"] != os.getpid() and run["device"] == "cpu"


def test_grid_survives_a_deterministically_failing_run_and_resubmission_skips_completed(ray_cluster, tiny_data,
                                                                                        tmp_path):
    good = [_config(tiny_data, fold=f) for f in (1, 2)]
    bad = _config(tiny_data, fold=3, lr=1e30)  # the loss is NaN at the first logged step, every time
    store_path = tmp_path / "runs.sqlite"
    grid = Grid("fail-test", [good[0], bad, good[1]])
    driver = Driver(grid, store_path, _settings(tmp_path))
    driver.start()
    outcome = driver.result()
    assert sorted(outcome.completed) == sorted(c.run_id for c in good)
    assert list(outcome.failed) == [bad.run_id] and "FloatingPointError" in outcome.failed[bad.run_id]
    assert outcome.retries == {}  # a deterministic failure is not retried
    with RunStore(store_path) as store:
        failed = store.get_run(bad.run_id)
        assert failed["status"] == "failed" and "training loss became nan" in failed["error"]
        assert store.counts()["completed"] == 2

    again = Driver(grid, store_path, _settings(tmp_path))
    again.start()
    second = again.result()
    assert sorted(second.skipped) == sorted(c.run_id for c in good)
    assert second.completed == [] and list(second.failed) == [bad.run_id]


# ---------------------------------------------------------------------------- dashboard jobs on Ray
@pytest.fixture
def dashboard(ray_cluster, tmp_path, monkeypatch):
    """The Training page on a private cache, its jobs sent to this module's Ray instance."""
    from core import jobs

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IRDASH_RAY_ADDRESS", ray_cluster[0])
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")  # nothing may start locally: every run here is a Ray task
    yield tmp_path
    for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
        jobs.cancel(job.id)
    info = jobs.worker_info()
    if info and info["alive"]:
        os.kill(info["pid"], signal.SIGKILL)


def _training_page(folds, epochs, patience=None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("pages/training.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.multiselect[0].set_value(list(folds))
    next(n for n in at.number_input if n.label == "Epochs").set_value(epochs)
    next(n for n in at.number_input if n.label.startswith("Batch size")).set_value(32)
    if patience is not None:
        next(n for n in at.number_input if n.label.startswith("Patience")).set_value(patience)
    at.radio(key="executor").set_value("ray").run()
    assert any("Ray task" in c.value for c in at.caption)
    start = next(b for b in at.button if b.label == "Start training")
    start.click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_dashboard_job_runs_as_a_ray_task_and_streams_into_the_store(dashboard):
    from core import jobs

    at = _training_page([2], epochs=2)
    (job,) = jobs.list_jobs()
    assert job.resource == "ray" and job.command[-2:] == ["--executor", "ray"] and job.meta["executor"] == "ray"
    done = _wait(lambda: (j := jobs.get_job(job.id)).status in ("completed", "failed", "cancelled") and j,
                 timeout=180, what="the Ray job to finish")
    assert done.status == "completed", done.log_tail
    at.run()
    row = at.dataframe[0].value.set_index("job").loc[job.id]
    assert row["status"] == "completed" and row["run status"] == "completed" and row["progress"] == 1.0
    with RunStore(dashboard / "runs.sqlite") as store:
        run = store.get_run(job.meta["run_ids"][0])
        assert run["pid"] not in (done.pid, os.getpid())  # trained in a Ray worker, not in the job's driver
        assert len(store.step_series([run["run_id"]], ["theta_d"])) > 0
    assert any(spec for spec in at.get("plotly_chart"))  # the live charts read the remote run's series


def test_cancel_in_the_dashboard_cancels_the_ray_task(dashboard):
    from core import jobs

    # no early stopping: on a loaded CI machine the run stopped early (patience 10) between its first
    # logged epoch and the click, and read "completed" (a race with early stopping, not a failed cancel)
    at = _training_page([3], epochs=10_000, patience=0)
    (job,) = jobs.list_jobs()
    run_id = job.meta["run_ids"][0]
    store_path = dashboard / "runs.sqlite"

    def training():
        if not store_path.exists():
            return False
        with RunStore(store_path) as store:
            run = store.find_run(run_id)
            return run is not None and run["status"] == "running" and run["epochs_done"] >= 1

    _wait(training, timeout=180, what="the Ray task to train")
    with RunStore(store_path) as store:
        worker = store.get_run(run_id)["pid"]
    # The Ray worker is frozen before the click: a worker too slow to handle its KeyboardInterrupt before
    # the driver exits (what a loaded machine does by chance, here by construction). Ray reports the
    # cancelled task as ended at once, so the driver itself must see that the run is marked.
    os.kill(worker, signal.SIGSTOP)
    try:
        at.run()
        next(b for b in at.button if b.label.startswith(f"Cancel #{job.id}")).click().run()
        assert jobs.get_job(job.id).status == "cancelled"
        with RunStore(store_path) as store:
            run = _wait(lambda: (r := store.get_run(run_id))["status"] != "running" and r, timeout=30,
                        what="the run to stop")
    finally:
        _resume_if_alive(worker)
    assert run["status"] == "cancelled" and "KeyboardInterrupt" in run["error"]
    assert run["epochs_done"] < 10_000


def _resume_if_alive(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass  # Ray ended the cancelled job's worker


def test_store_actor_is_shared_per_store_file_and_replaced_with_the_file(ray_cluster, tmp_path):
    from ltr.remote_store import store_service

    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    first = store_service(path)
    assert store_service(path)._actor_id == first._actor_id  # the second driver finds it warm
    for f in tmp_path.iterdir():  # the user deletes the store; a fresh one must not be written blind
        f.unlink()
    with RunStore(path) as store:
        store.register_run("r", {"data": "d", "fold": 1, "loss": "l", "model": "m"})
    second = store_service(path)
    assert second._actor_id != first._actor_id
    ray.get(second.post.remote("log_steps", ("r", [(0, 0, {"loss": 1.0})]), {}))
    ray.get(second.flush.remote())
    with RunStore(path) as store:
        assert len(store.step_series(["r"], ["loss"])) == 1


def test_cli_grid_on_an_existing_cluster_then_resubmitted(ray_cluster, tiny_data, tmp_path):
    """``python -m ltr grid --executor ray --address <cluster>``: a driver process of its own joins the
    running cluster (as on a head node), and the same command again skips what is done."""
    import subprocess
    import sys

    from core.paths import PROJECT_ROOT

    store = tmp_path / "runs.sqlite"
    cmd = [sys.executable, "-m", "ltr", "grid", "--name", "cli-ray", "--data", tiny_data, "--folds", "1", "2",
           "--losses", "ranknet", "--models", "mlp", "--epochs", "2", "--batch-size", "16", "--store", str(store),
           "--no-progress", "--executor", "ray", "--address", ray_cluster[0], "--checkpoint-dir", str(tmp_path / "ck")]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    first = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "cli-ray: 2 completed, 0 already done, 0 failed" in first.stdout
    again = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "cli-ray: 0 completed, 2 already done, 0 failed" in again.stdout
    with RunStore(store) as s:
        assert s.counts()["completed"] == 2 and set(s.list_runs()["experiment"]) == {"cli-ray"}


def _listening_sockets(pids) -> list[tuple[str, str, int]]:
    psutil = pytest.importorskip("psutil")
    names = {}
    for pid in pids:
        try:
            names[pid] = psutil.Process(pid).name()
        except psutil.NoSuchProcess:
            pass
    return [(names[c.pid], c.laddr.ip, c.laddr.port) for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.pid in names]


def test_the_local_instance_listens_on_loopback_only(ray_cluster):
    """Issue 18: gcs_server and raylet listened on every interface. Every listening socket of the
    local instance's processes (the GCS, raylets, workers, agents, this driver) is on 127.0.0.1."""
    import psutil

    @ray.remote
    def worker_pid():
        return os.getpid()

    ray.get(worker_pid.remote())  # a worker process exists and serves
    me = psutil.Process()
    pids = {me.pid, *(p.pid for p in me.children(recursive=True))}
    sockets = _listening_sockets(pids)
    names = {name for name, _, _ in sockets}
    assert {"gcs_server", "raylet"} <= names, sockets
    loopback = {"127.0.0.1", "::ffff:127.0.0.1", "::1"}
    assert [s for s in sockets if s[1] not in loopback] == []
    assert ray_cluster[0].startswith("127.0.0.1:")  # the GCS address others would use
