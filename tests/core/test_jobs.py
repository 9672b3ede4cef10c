"""The background job runner with real processes: a worker, real commands, real signals."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from core import jobs
from core.paths import PROJECT_ROOT
from tests.support.waiting import wait_for_job_status, wait_until


@pytest.fixture
def job_cache(tmp_path, monkeypatch):
    """A private cache per test (jobs.sqlite, logs, worker lock); every process started is ended."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(jobs.LIMITS_ENV, raising=False)
    workers: list[subprocess.Popen] = []

    def start_worker() -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "core.jobs", "worker", "--idle-exit", "20", "--poll", "0.1"],
                                cwd=PROJECT_ROOT, env=dict(os.environ), start_new_session=True)
        workers.append(proc)
        wait_until(lambda: (jobs.worker_info() or {}).get("pid") == proc.pid, what="worker heartbeat")
        return proc

    yield start_worker
    for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
        jobs.cancel(job.id)
    for proc in workers:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    info = jobs.worker_info()
    if info and info["alive"]:  # a worker ensure_worker() started for this test
        os.kill(info["pid"], signal.SIGKILL)


def _py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_submit_runs_through_ensure_worker_and_completes(job_cache):
    job_id = jobs.submit(_py("print('hello from job')"), label="hello", meta={"run_ids": ["r1"]})
    job = wait_for_job_status(job_id, ("completed", "failed"))
    assert job.status == "completed", job.log_tail
    assert job.exit_code == 0
    assert "hello from job" in job.log_path.read_text()
    assert job.meta == {"run_ids": ["r1"]} and job.label == "hello"
    assert job.started >= job.created and job.finished >= job.started
    assert jobs.ensure_worker() is None  # the worker that ran it is still alive: no second one


def test_crashing_job_fails_with_log_tail(job_cache):
    job_cache()
    job_id = jobs.submit(_py("import sys; print('about to crash'); sys.exit('boom: bad config')"),
                         label="crash", start_worker=False)
    job = wait_for_job_status(job_id, ("completed", "failed"))
    assert job.status == "failed"
    assert job.exit_code == 1
    assert "boom: bad config" in job.log_tail and "exit code 1" in job.log_tail


def test_cancel_running_job_kills_its_process_group(job_cache, tmp_path):
    job_cache()
    # The job spawns a grandchild: cancelling must end the whole process group, not only the shell.
    code = ("import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            f"open({str(tmp_path / 'child.pid')!r}, 'w').write(str(p.pid)); time.sleep(60)")
    job_id = jobs.submit(_py(code), label="sleeper", start_worker=False)
    job = wait_for_job_status(job_id, "running")
    child_pid = int(wait_until(lambda: (tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text(),
                          what="grandchild pid"))
    assert jobs.cancel(job_id) == "cancelled"
    assert jobs.get_job(job_id).status == "cancelled"
    wait_until(lambda: jobs.proc_start_time(job.pid) is None, what="job shell to exit")
    wait_until(lambda: jobs.proc_start_time(child_pid) is None, what="grandchild to exit")
    time.sleep(0.3)  # the worker must not overwrite a cancelled job with failed
    assert jobs.get_job(job_id).status == "cancelled"


def test_cancel_queued_job_never_starts(job_cache):
    job_id = jobs.submit(_py("print('x')"), label="never", start_worker=False)
    assert jobs.cancel(job_id) == "cancelled"
    job_cache()
    time.sleep(0.5)
    job = jobs.get_job(job_id)
    assert job.status == "cancelled" and job.started is None and job.pid is None


def test_concurrency_limit_per_resource_class(job_cache, tmp_path, monkeypatch):
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=1,cuda:0=1")
    # Each job records when it ran; cpu0 ends only once the GPU job has started (or after 20 s), so the
    # GPU job's own slot shows as an overlap by construction, however slowly a loaded machine starts it.
    stamp = (f"import os, sys, time\nd, name, t0 = {str(tmp_path)!r}, sys.argv[1], time.time()\n"
             "open(f'{d}/{name}.started', 'w').close()\n"
             "while name == 'cpu0' and not os.path.exists(f'{d}/gpu.started') and time.time() < t0 + 20:\n"
             "    time.sleep(0.01)\n"
             "open(f'{d}/{name}', 'w').write(f'{t0} {time.time()}')\n")
    cpu_ids = [jobs.submit(_py(stamp) + [f"cpu{i}"], label=f"cpu{i}", start_worker=False) for i in range(2)]
    gpu_id = jobs.submit(_py(stamp) + ["gpu"], label="gpu", resource="cuda:0", start_worker=False)
    job_cache()
    seen_running = set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        running = jobs.list_jobs(status="running")
        assert sum(j.resource == "cpu" for j in running) <= 1
        seen_running |= {j.id for j in running}
        if all(jobs.get_job(i).status == "completed" for i in [*cpu_ids, gpu_id]):
            break
        time.sleep(0.05)
    spans = {name: tuple(map(float, (tmp_path / name).read_text().split())) for name in ("cpu0", "cpu1", "gpu")}
    assert spans["cpu0"][1] <= spans["cpu1"][0], "two CPU jobs overlapped despite limit 1"
    # Another resource class has its own slot: the GPU job ran alongside the first CPU job.
    assert spans["gpu"][0] < spans["cpu0"][1]


def test_new_worker_finds_jobs_the_old_one_started(job_cache, tmp_path):
    worker = job_cache()
    ok_id = jobs.submit(_py("import time; time.sleep(1.5); print('survived')"), label="ok", start_worker=False)
    dies_id = jobs.submit(_py("import time; time.sleep(60)"), label="dies", resource="cuda:0", start_worker=False)
    ok_job = wait_for_job_status(ok_id, "running")
    dies_job = wait_for_job_status(dies_id, "running")
    worker.kill()
    worker.wait()
    # The jobs outlive their worker; one finishes normally, the other is killed while nobody watches.
    os.killpg(dies_job.pid, signal.SIGKILL)
    wait_until(lambda: ok_job.exit_path.exists(), what="orphaned job to finish")
    assert jobs.get_job(ok_id).status == "running"
    job_cache()
    ok_job = wait_for_job_status(ok_id, ("completed", "failed"))
    assert ok_job.status == "completed" and ok_job.exit_code == 0
    assert "survived" in ok_job.log_tail
    dies_job = wait_for_job_status(dies_id, ("completed", "failed"))
    assert dies_job.status == "failed" and dies_job.exit_code is None
    assert "died" in dies_job.log_tail


def test_second_worker_exits_while_one_holds_the_lock(job_cache):
    job_cache()
    assert jobs.worker_info()["alive"]
    assert jobs.run_worker(idle_exit=0) == 1
    assert jobs.ensure_worker() is None


def test_bad_requests_are_refused(job_cache, monkeypatch):
    with pytest.raises(jobs.JobError, match="non-empty"):
        jobs.submit([], label="x", start_worker=False)
    with pytest.raises(jobs.JobError, match="resource class"):
        jobs.submit(["true"], label="x", resource="tpu", start_worker=False)
    with pytest.raises(jobs.JobError, match="no job"):
        jobs.cancel(12345)
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=two")
    with pytest.raises(jobs.JobError, match=jobs.LIMITS_ENV):
        jobs.resource_limits()
    assert jobs.list_jobs() == []


def test_gpu_jobs_get_the_physical_gpu_under_a_restricted_cuda_visible_devices(monkeypatch):
    """``cuda:N`` numbers the GPUs the dashboard sees: under CUDA_VISIBLE_DEVICES=2,3 job ``cuda:1`` is GPU 3."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2, 3")
    assert [jobs.visible_device(i) for i in ("0", "1")] == ["2", "3"]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert [jobs.visible_device(i) for i in ("0", "1")] == ["0", "1"]


# ---------------------------------------------------------------------------- issue 10: queues and claims
def _claim(job_id: int) -> None:
    """What start_queued does first: the job marked running, no handle yet (a worker dying here)."""
    from core.db import transaction
    from core.jobs.records import connect_jobs

    conn = connect_jobs()
    with transaction(conn) as c:
        c.execute("UPDATE jobs SET status = 'running', started = ? WHERE id = ?", (time.time(), job_id))
    conn.close()


def test_claim_window_launched_process_is_adopted_not_failed(job_cache):
    """The claiming worker launched the process and died before recording its pid: the next worker
    finds the process (its session leader carries this job's exit-file path) and keeps the job running."""
    job_id = jobs.submit([sys.executable, "-c", "import time; time.sleep(30)"], label="sleeper", start_worker=False)
    _claim(job_id)
    first = jobs.LocalProcessExecutor()
    handle, pid = first.launch(jobs.get_job(job_id))  # launched, never recorded
    try:
        assert jobs.get_job(job_id).handle is None
        changed = jobs.reap(jobs.LocalProcessExecutor())  # the next worker, which never saw this child
        job = jobs.get_job(job_id)
        assert changed == [] and job.status == "running"
        assert (job.handle, job.pid) == (handle, pid)
        jobs.reap(jobs.LocalProcessExecutor())  # and from then on it is an ordinary running job
        assert jobs.get_job(job_id).status == "running"
    finally:
        jobs.cancel(job_id)
        first._children[pid].wait(timeout=20)


def test_claim_window_never_launched_job_goes_back_to_the_queue(job_cache):
    job_id = jobs.submit(["true"], label="never started", start_worker=False)
    _claim(job_id)
    assert jobs.reap(jobs.LocalProcessExecutor()) == []
    job = jobs.get_job(job_id)
    assert job.status == "queued" and job.started is None and job.exit_code is None


def test_waiting_reason_names_the_job_holding_the_resource(job_cache):
    holder = jobs.submit([sys.executable, "-c", "import time; time.sleep(30)"], label="retrieve dense on dl19",
                         meta={"kind": "pipeline.retrieve"}, start_worker=False)
    executor = jobs.LocalProcessExecutor()
    assert jobs.start_queued(executor, limits={"cpu": 1}) == [holder]
    from core.db import transaction
    from core.jobs.records import connect_jobs

    conn = connect_jobs()
    with transaction(conn) as c:  # it has been running for 12 minutes
        c.execute("UPDATE jobs SET started = started - 720 WHERE id = ?", (holder,))
    conn.close()
    waiting = [jobs.submit(["true"], label=f"train fold {f}", meta={"kind": "ltr.train"}, start_worker=False)
               for f in (1, 2)]
    try:
        reasons = jobs.waiting_reasons()
        assert reasons[waiting[0]] == f"waiting for cpu: job #{holder}, retrieve dense on dl19, running 12 min"
        assert reasons[waiting[1]].endswith("(1 queued before it)")
        rows = {r["job"]: r for r in jobs.resource_jobs(exclude_kind="ltr.train")}
        assert list(rows) == [holder] and rows[holder]["status"] == "running" and rows[holder]["for"] == "12 min"
        assert [r["job"] for r in jobs.resource_jobs()] == [holder, *waiting]
        jobs.set_limit("cpu", 0)
        assert jobs.waiting_reasons()[waiting[0]].startswith("waiting: the cpu limit is 0")
    finally:
        jobs.cancel(holder)


def test_concurrency_limit_from_toml_page_and_environment(job_cache, tmp_path, monkeypatch):
    config = tmp_path / "irdash.toml"
    config.write_text('[jobs]\nlimits = { cpu = 3, "cuda:0" = 2 }\n')
    monkeypatch.setenv("IRDASH_CONFIG", str(config))
    assert jobs.resource_limits() == {"cpu": 3, "cuda:0": 2}
    jobs.set_limit("cpu", 2)  # the Training page's control overrides irdash.toml
    assert jobs.resource_limits() == {"cpu": 2, "cuda:0": 2}
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=1")  # the environment overrides both
    assert jobs.resource_limits()["cpu"] == 1
    with pytest.raises(jobs.JobError):
        jobs.set_limit("gpu", 1)
    monkeypatch.delenv(jobs.LIMITS_ENV)
    ids = [jobs.submit([sys.executable, "-c", "import time; time.sleep(30)"], label=f"j{i}", start_worker=False)
           for i in range(3)]
    try:
        assert jobs.start_queued(jobs.LocalProcessExecutor()) == ids[:2]  # two at once, as set
    finally:
        for job_id in ids:
            jobs.cancel(job_id)


def test_started_worker_is_not_our_child(job_cache):
    """ensure_worker() leaves no <defunct> process under the caller: the worker's parent is not us."""
    pid = jobs.ensure_worker()
    assert pid is not None
    try:
        wait_until(lambda: jobs.proc_start_time(pid), what="the worker process")
        with open(f"/proc/{pid}/stat") as fh:
            parent = int(fh.read().rsplit(") ", 1)[1].split()[1])
        assert parent != os.getpid()
        with pytest.raises(ChildProcessError):  # nothing for us to reap, ever
            os.waitpid(pid, os.WNOHANG)
    finally:
        os.kill(pid, signal.SIGKILL)
