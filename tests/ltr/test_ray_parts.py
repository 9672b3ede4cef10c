"""The Ray executor's parts that need no Ray instance: settings, resource requests, the store writer's
batching and ordering, checkpoint mirroring through fsspec, failure classification, CLI errors."""
from __future__ import annotations

import os
import time

import pytest

from core.ray_cluster import RayConfigError, RaySettings, ray_settings, run_resources
from ltr.remote_store import StoreService
from ltr.store import RunStore


@pytest.fixture
def config_file(tmp_path, monkeypatch):
    path = tmp_path / "irdash.toml"
    monkeypatch.setenv("IRDASH_CONFIG", str(path))
    monkeypatch.delenv("IRDASH_RAY_ADDRESS", raising=False)
    monkeypatch.delenv("IRDASH_RAY_CHECKPOINT_DIR", raising=False)
    return path


def test_settings_from_irdash_toml_env_and_flags(config_file, monkeypatch):
    assert ray_settings() == RaySettings()
    config_file.write_text('[ray]\nexecutor = "ray"\naddress = "auto"\ncpus_per_run = 2\nmax_retries = 1\n')
    settings = ray_settings()
    assert (settings.executor, settings.address, settings.cpus_per_run, settings.max_retries) == ("ray", "auto", 2, 1)
    monkeypatch.setenv("IRDASH_RAY_ADDRESS", "ray://head:10001")
    assert ray_settings().address == "ray://head:10001"
    flags = ray_settings().with_overrides(address=None, max_retries=5)  # an unset flag keeps the file's value
    assert flags.address == "ray://head:10001" and flags.max_retries == 5
    config_file.write_text('[ray]\nadress = "auto"\n')
    with pytest.raises(RayConfigError, match="unknown key.*adress"):
        ray_settings()
    with pytest.raises(RayConfigError, match="executor"):
        RaySettings(executor="slurm")


def test_a_cuda_run_asks_for_gpus_a_cpu_run_for_cpus():
    settings = RaySettings(cpus_per_run=2, gpus_per_run=0.5)
    assert run_resources(settings, wants_cuda=True) == {"num_gpus": 0.5, "num_cpus": 0}
    assert run_resources(settings, wants_cuda=False) == {"num_cpus": 2}

    from ltr.ray_runner import wants_cuda
    from ltr.train import RunConfig

    config = RunConfig(data="synthetic-mq2008", fold=1, loss="ranknet", model="mlp")
    assert wants_cuda(config, cluster_has_gpu=True) and not wants_cuda(config, cluster_has_gpu=False)
    config.device = "cpu"
    assert not wants_cuda(config, cluster_has_gpu=True)
    config.device = "cuda:1"
    assert wants_cuda(config, cluster_has_gpu=False)


def _register(store: RunStore, run_id: str) -> None:
    store.register_run(run_id, {"data": "d", "fold": 1, "loss": "l", "model": "m"})
    store.start_run(run_id, device="cpu")


def test_store_service_writes_posted_steps_of_many_runs_in_one_transaction(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        for run_id in ("a", "b"):
            _register(store, run_id)
    service = StoreService(str(path), flush_seconds=3600)  # no timer flush in this test
    try:
        for step in range(50):
            for run_id in ("a", "b"):
                service.post("log_steps", (run_id, [(step, 0, {"loss": float(step)})]), {})
        service.post("heartbeat", ("a",), {})
        with RunStore(path) as reader:
            assert reader.step_series(["a", "b"], ["loss"]).empty  # still pending in the actor
        assert service.flush() == 1  # 100 posted rows of two runs: one write
        with RunStore(path) as reader:
            series = reader.step_series(["a", "b"], ["loss"])
            assert len(series) == 100 and list(series[series.run_id == "b"]["value"]) == [float(s) for s in range(50)]
        # A call writes what is pending first: an epoch is never stored before the steps that led to it.
        service.post("log_steps", ("a", [(50, 1, {"loss": 0.5})]), {})
        service.call("log_epoch", ("a", 1, {"ndcg@10": 0.7}), {})
        with RunStore(path) as reader:
            assert len(reader.step_series(["a"], ["loss"])) == 51
            assert reader.get_run("a")["epochs_done"] == 2
        with pytest.raises(ValueError, match="not a run-store method"):
            service.call("close", (), {})
    finally:
        service.close()


def test_store_service_flushes_on_its_own_within_its_interval(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        _register(store, "a")
    service = StoreService(str(path), flush_seconds=0.05)
    try:
        service.post("log_steps", ("a", [(0, 0, {"theta_d": 1.0})]), {})
        deadline = time.monotonic() + 5
        with RunStore(path) as reader:
            while reader.step_series(["a"], ["theta_d"]).empty and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(reader.step_series(["a"], ["theta_d"])) == 1
    finally:
        service.close()


def test_start_run_records_the_remote_trainer_not_the_writer(tmp_path):
    with RunStore(tmp_path / "runs.sqlite") as store:
        store.register_run("r", {"data": "d", "fold": 1, "loss": "l", "model": "m"})
        store.start_run("r", device="cuda", pid=4242, host="gpu-node-7")
        run = store.get_run("r")
        assert (run["pid"], run["host"]) == (4242, "gpu-node-7")
        # Another host's live-looking trainer holds the run (judged by its heartbeat alone).
        from ltr.store import RunBusy

        with pytest.raises(RunBusy):
            store.start_run("r", device="cuda", pid=4242, host="gpu-node-8")


@pytest.mark.parametrize("as_url", [False, True])
def test_checkpoint_mirror_round_trip_through_fsspec(tmp_path, as_url):
    from ltr.ray_runner import CheckpointMirror

    shared = tmp_path / "shared"
    url = f"file://{shared}" if as_url else str(shared)
    local = tmp_path / "node-a" / "run.pt"
    mirror = CheckpointMirror(url, "run", local)
    assert not mirror.fetch() and not mirror.sync()  # nothing anywhere yet
    local.parent.mkdir(parents=True)
    local.write_bytes(b"epoch-1")
    assert mirror.sync() and (shared / "run.pt").read_bytes() == b"epoch-1"
    assert not mirror.sync()  # unchanged: no second upload
    first = local.stat().st_mtime_ns
    local.write_bytes(b"epoch-2")
    # a second later than the first write, whatever the file system's timestamp resolution
    os.utime(local, ns=(first + 10**9, first + 10**9))
    assert mirror.sync() and (shared / "run.pt").read_bytes() == b"epoch-2"
    assert not list(shared.glob("*.tmp-*"))  # uploaded under a temp name, then moved
    # Another node picks it up.
    other = CheckpointMirror(url, "run", tmp_path / "node-b" / "run.pt")
    assert other.fetch() and other.local.read_bytes() == b"epoch-2"
    other.delete()
    assert not (shared / "run.pt").exists()


def test_task_failures_are_classified_lost_cancelled_or_failed():
    pytest.importorskip("ray")
    import ray.exceptions as rex

    from ltr.ray_runner import _classify

    assert _classify(rex.WorkerCrashedError())[0] == "lost"
    assert _classify(rex.NodeDiedError("node 1 died"))[0] == "lost"
    assert _classify(rex.TaskCancelledError())[0] == "cancelled"

    class Wrapped(Exception):  # what ray.get raises for an exception in the task: it carries .cause
        def __init__(self, cause):
            self.cause = cause

    assert _classify(Wrapped(KeyboardInterrupt()))[0] == "cancelled"
    kind, message = _classify(Wrapped(OSError("disk full")))
    assert kind == "failed" and message == "OSError: disk full"


def test_cli_refuses_bad_ray_settings_with_one_line(config_file, capsys):
    from ltr.cli import EXIT_BAD_INPUT, main

    args = ["train", "--data", "synthetic-mq2008", "--fold", "1", "--loss", "ranknet", "--model", "mlp",
            "--executor", "ray"]
    assert main([*args, "--no-resume"]) == EXIT_BAD_INPUT
    assert "--no-resume is not supported" in capsys.readouterr().err
    config_file.write_text('[ray]\nmax_retries = -1\n')
    assert main(args) == EXIT_BAD_INPUT
    assert "max_retries must be >= 0" in capsys.readouterr().err


def test_make_client_with_the_ray_executor_wraps_the_cached_client(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_RAY_ADDRESS", "auto")
    from pipeline.llm import ResponseCache, make_client
    from pipeline.llm.client import CachedClient
    from pipeline.llm.ray_fanout import RayChatClient
    from tests.support.loopback_llm import LoopbackLLMServer

    cache = ResponseCache(tmp_path / "llm.sqlite")
    with LoopbackLLMServer() as server:  # make_client checks that the model exists
        spec = f"ollama:llama3.2:3b@{server.url}"
        local = make_client(spec, cache=cache)
        assert isinstance(local, CachedClient)
        fan = make_client(spec, cache=cache, executor="ray", address="ray://head:10001")
        assert isinstance(fan, RayChatClient) and fan.client.cache is cache
        assert fan.settings.address == "ray://head:10001" and fan.provenance == local.provenance
        assert fan._backend == spec  # what each worker rebuilds
    with pytest.raises(ValueError, match="LLM executor"):
        make_client("ollama:llama3.2:3b@http://127.0.0.1:9", cache=cache, executor="slurm")
