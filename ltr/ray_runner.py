"""Training runs as Ray tasks: the ``ray`` executor of ``python -m ltr grid`` / ``train`` and of dashboard jobs.

One run = one Ray task calling :func:`ltr.train.inprocess.train_one`, the entry point of every host of runs,
with:

- **resources** from :func:`core.ray_cluster.run_resources`: ``gpus_per_run`` GPUs when the run
  wants CUDA (its ``device`` says ``cuda``, or it says nothing and the cluster has GPUs; Ray then
  sets ``CUDA_VISIBLE_DEVICES`` and the run trains on ``cuda``), else ``cpus_per_run`` CPUs (torch
  gets at most that many threads, fewer when the node's load leaves fewer free: :mod:`core.threads`). The grid's concurrency is what the cluster offers. Ray reuses a worker
  process for many runs, so torch is imported once per worker, not once per run.
- **the store** through a :class:`ltr.remote_store.StoreService` actor on the driver's node: step
  metrics, status and heartbeat land in the driver's SQLite store as the run trains, so the
  dashboard's live trajectories work for remote runs.
- **checkpoints** in a shared location, a path or any fsspec URL (``[ray] checkpoint_dir``,
  ``--checkpoint-dir``; default ``<store folder>/checkpoints``, where local runs keep theirs, so a
  run started locally resumes on Ray and vice versa). The trainer writes its checkpoint to a
  node-local scratch folder as usual; :class:`CheckpointMirror` fetches the shared copy before the
  run starts and uploads each new one (temp name, then move) within ``MIRROR_POLL_SECONDS``.

Failure handling, decided by the driver (Ray's own task retries are off so the store can say what
happened):

- the worker or node is lost (``WorkerCrashedError``, ``NodeDiedError``, ...) or the run is
  preempted (SIGTERM on the worker: the run stops as ``cancelled``, the task reports ``preempted``):
  the run is marked failed with the reason and resubmitted, up to ``max_retries`` times; it resumes
  from its last shared checkpoint on whichever node Ray picks and ends with the same result as an
  uninterrupted run (see :mod:`ltr.train`);
- the run itself fails (an exception in training, bad input): the store already holds its error;
  it is reported failed and the grid goes on;
- Ctrl-C or SIGTERM on the driver (cancel in the dashboard): every pending task is cancelled with
  ``ray.cancel`` (a ``KeyboardInterrupt`` in the task), so each run is marked ``cancelled`` and can
  be resumed; a run whose task has not marked it within ``CANCEL_WAIT_SECONDS`` (a worker too slow
  or frozen) is marked by the driver before it exits (see :func:`_mark_cancelled`).

Completed runs are skipped exactly as in the local grid (:func:`ltr.grid.split_done`).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable

from core.jobs.worker import KILL_GRACE_SECONDS
from core.ray_cluster import RaySettings, connect, describe, run_resources
from core.signals import sigterm_raises
from ltr.grid import Grid, GridOutcome, split_done
from ltr.remote_store import RemoteRunStore, store_service
from ltr.store import RunStore
from ltr.train import RunConfig, checkpoint_path

MIRROR_POLL_SECONDS = 0.2
# After cancelling on Ctrl-C/SIGTERM, how long the driver waits for each cancelled task to mark its run
# before marking it itself: well within the grace a cancelled dashboard job gets before its SIGKILL.
CANCEL_WAIT_SECONDS = KILL_GRACE_SECONDS / 2
CANCEL_POLL_SECONDS = 0.1


# --------------------------------------------------------------------------- checkpoints
class CheckpointMirror:
    """Keeps ``<url>/<run_id>.pt`` (any fsspec location) in step with a run's local checkpoint file."""

    def __init__(self, url: str, run_id: str, local: Path):
        import fsspec

        self.fs, root = fsspec.core.url_to_fs(str(url))
        self.remote = f"{root.rstrip('/')}/{run_id}.pt"
        self.local = Path(local)
        self._seen: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def fetch(self) -> bool:
        """Copy the shared checkpoint to the local path; False when there is none."""
        if not self.fs.exists(self.remote):
            return False
        self.local.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.local.with_name(self.local.name + ".fetch")
        self.fs.get_file(self.remote, str(tmp))
        os.replace(tmp, self.local)
        self._seen = self.local.stat().st_mtime_ns
        return True

    def sync(self) -> bool:
        """Upload the local checkpoint if it changed since the last upload; True when it did."""
        try:
            stamp = self.local.stat().st_mtime_ns
            if stamp == self._seen:
                return False
            data = self.local.read_bytes()  # the trainer replaces the file atomically: a whole one
        except FileNotFoundError:
            return False
        parent = self.remote.rsplit("/", 1)[0]
        self.fs.makedirs(parent, exist_ok=True)
        tmp = f"{self.remote}.tmp-{os.getpid()}"
        self.fs.pipe_file(tmp, data)
        self.fs.mv(tmp, self.remote)
        self._seen = stamp
        return True

    def start(self) -> "CheckpointMirror":
        def loop():
            while not self._stop.wait(MIRROR_POLL_SECONDS):
                self.sync()

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching and upload the last checkpoint (a cancelled or preempted run resumes from it)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sync()

    def delete(self) -> None:
        if self.fs.exists(self.remote):
            self.fs.rm(self.remote)


# --------------------------------------------------------------------------- the task
def wants_cuda(config: RunConfig, cluster_has_gpu: bool) -> bool:
    return (config.device or "").startswith("cuda") or (config.device in (None, "auto") and cluster_has_gpu)


def train_task(config_values: dict, store_actor, checkpoint_url: str, *, use_cuda: bool, threads: int,
               force: bool = False) -> dict:
    """The body of one run's Ray task: :func:`ltr.train.inprocess.train_one`, the entry point every host
    of runs uses, so a Ray worker (reused by Ray for many runs) also keeps its recent folds in memory.

    Returns ``{run_id, status, message, resumed_after_epochs, host, pid}``: ``status`` is
    ``completed``, ``failed`` or ``bad input`` as :class:`~ltr.train.inprocess.RunOutcome` says, or
    ``preempted`` when SIGTERM reached this worker (the driver's own cancel arrives as a
    ``KeyboardInterrupt`` instead, which ends the task); ``resumed_after_epochs``: the epochs the
    shared checkpoint held, None when the run started afresh.
    """
    import torch

    from ltr.train.inprocess import train_one

    config = RunConfig.from_dict(config_values)
    # cuda:N named a GPU of the driver's machine; here Ray's CUDA_VISIBLE_DEVICES names the one we got.
    config.device = "cuda" if use_cuda else "cpu"
    scratch = Path(tempfile.mkdtemp(prefix="irdash-run-"))
    store = RemoteRunStore(store_actor, scratch)
    mirror = CheckpointMirror(checkpoint_url, config.run_id, checkpoint_path(store, config.run_id))
    try:
        resumed = None
        if force:
            mirror.delete()  # a forced run starts over; a stale shared copy must not come back
        elif mirror.fetch():
            resumed = int(torch.load(mirror.local, map_location="cpu", weights_only=True)["counters"]["epoch"])
        mirror.start()
        say = lambda msg: print(f"[{config.run_id}] {msg}", flush=True)  # noqa: E731 (Ray forwards to the driver)
        try:
            # At most the task's CPUs, CUDA task or not (a CUDA task once took the whole node's free cores),
            # chosen afresh for each task of this reused worker (core.threads).
            outcome = train_one(config, store, force=force, progress=say, threads_at_most=max(1, threads))
        finally:
            mirror.stop()
        status = "preempted" if outcome.status == "cancelled" else outcome.status
        if status == "completed":
            mirror.delete()
        return {"run_id": config.run_id, "status": status, "message": outcome.message,
                "resumed_after_epochs": resumed, "host": store.host, "pid": store.pid}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


_REMOTE_TASK = None


def _remote_task():
    global _REMOTE_TASK
    if _REMOTE_TASK is None:
        import ray

        _REMOTE_TASK = ray.remote(max_retries=0)(train_task)  # retries are the driver's (see module doc)
    return _REMOTE_TASK


# --------------------------------------------------------------------------- the driver
@dataclass
class RayGridOutcome(GridOutcome):
    retries: dict = field(default_factory=dict)  # run id -> lost attempts retried
    resumed: dict = field(default_factory=dict)  # run id -> epochs its checkpoint held when it resumed
    cancelled: list = field(default_factory=list)
    placement: dict = field(default_factory=dict)  # run id -> "host:pid" of the attempt that finished it


def _lost_errors() -> tuple[type[BaseException], ...]:
    import ray.exceptions as rex

    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "ObjectLostError", "OwnerDiedError",
             "RaySystemError")
    return tuple(getattr(rex, n) for n in names if hasattr(rex, n))


def _classify(exc: BaseException) -> tuple[str, str]:
    """``(kind, one-line message)`` of a task that raised: ``lost``, ``cancelled`` or ``failed``."""
    import ray.exceptions as rex

    if isinstance(exc, rex.TaskCancelledError) or isinstance(getattr(exc, "cause", None), KeyboardInterrupt):
        return "cancelled", "cancelled"
    kind = "lost" if isinstance(exc, _lost_errors()) else "failed"
    cause = getattr(exc, "cause", None) or exc
    return kind, f"{type(cause).__name__}: {' '.join(str(cause).split())[:500]}"


def _sigterm_interrupts():
    """SIGTERM to the driver (the dashboard's cancel) is handled like Ctrl-C: cancel the tasks first."""
    return sigterm_raises(lambda signum: KeyboardInterrupt(f"signal {signum}"))


def run_grid_ray(grid: Grid, store_path: str | Path, settings: RaySettings, *, force: bool = False,
                 progress: bool = True, say: Callable[[str], None] | None = None,
                 register: bool = True) -> RayGridOutcome:
    """Run every not-yet-completed config of ``grid`` as Ray tasks; see the module docstring.

    ``register=False`` records no experiment (single runs, as ``python -m ltr train`` does).
    """
    import ray

    say = say or (lambda msg: print(msg, file=sys.stderr, flush=True))
    store_path = Path(store_path).resolve()
    with RunStore(store_path) as store:
        if register:
            store.register_experiment(grid.name, grid.source)
        todo, done = split_done(grid, store) if not force else (list({c.run_id: c for c in grid.configs}.values()), [])
    outcome = RayGridOutcome(skipped=[c.run_id for c in done])
    if not todo:
        return outcome
    resources = connect(settings, log_to_driver=progress)
    checkpoint_url = settings.checkpoint_dir or str(store_path.parent / "checkpoints")
    say(f"{grid.name}: {len(todo)} run(s) on Ray ({describe(resources)}); checkpoints in {checkpoint_url}")
    actor = store_service(store_path)
    has_gpu = resources.get("GPU", 0) > 0
    task = _remote_task()
    pending: dict = {}  # ObjectRef -> (config, attempt)

    def submit(cfg: RunConfig, attempt: int) -> None:
        cuda = wants_cuda(cfg, has_gpu)
        res = run_resources(settings, wants_cuda=cuda)
        values = {f.name: getattr(cfg, f.name) for f in fields(cfg)}
        ref = task.options(**res).remote(values, actor, checkpoint_url, use_cuda=cuda,
                                         threads=int(res.get("num_cpus") or 1), force=force and attempt == 0)
        pending[ref] = (cfg, attempt)

    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=grid.name, unit="run", disable=not progress)
    try:
        with _sigterm_interrupts():
            for cfg in todo:
                submit(cfg, 0)
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    cfg, attempt = pending.pop(ref)
                    if _settle(ref, cfg, attempt, outcome, settings, actor, submit, say):
                        bar.update()
                    bar.set_postfix(failed=len(outcome.failed), retried=len(outcome.retries))
    except BaseException:
        for ref in pending:
            ray.cancel(ref)  # KeyboardInterrupt in the task: train_run marks the run cancelled...
        _mark_cancelled(actor, [cfg.run_id for cfg, _attempt in pending.values()])  # ...or the driver does
        raise
    finally:
        bar.close()
        ray.get(actor.flush.remote(), timeout=60)  # everything this grid sent is in SQLite when we return
    return outcome


def _mark_cancelled(actor, run_ids: list[str], wait: float = CANCEL_WAIT_SECONDS) -> list[str]:
    """Make sure each run whose task was just cancelled reads ``cancelled``; returns those the driver marked.

    Ray reports a cancelled task as ended at once (``ray.wait`` returns), while the task's own
    KeyboardInterrupt handler (:func:`ltr.train.train_run`) still has to reach the store actor; and
    when the driver exits, Ray ends the job's workers. So on a loaded machine a driver that only
    waited on the task could exit before the handler wrote, and the run read ``running`` for good.
    The driver waits up to ``wait`` seconds for the store to show each run stopped, then marks the
    runs still ``running`` itself (only those: a run that completed meanwhile stays completed).
    """
    import ray

    def still_running(run_id: str) -> bool:
        run = ray.get(actor.call.remote("find_run", (run_id,), {}))
        return run is not None and run["status"] == "running"

    deadline = time.monotonic() + wait
    left = [r for r in run_ids if still_running(r)]
    while left and time.monotonic() < deadline:
        time.sleep(CANCEL_POLL_SECONDS)
        left = [r for r in left if still_running(r)]
    error = "cancelled (KeyboardInterrupt on the Ray driver; the task did not record it); resume to continue"
    return [r for r in left if ray.get(actor.call.remote("fail_run", (r, error),
                                                         {"status": "cancelled", "only_running": True}))]


def _settle(ref, cfg: RunConfig, attempt: int, outcome: RayGridOutcome, settings: RaySettings, actor,
            submit: Callable[[RunConfig, int], None], say: Callable[[str], None]) -> bool:
    """Record how the task of ``cfg`` ended; False when the run was resubmitted (a lost attempt)."""
    import ray

    run_id = cfg.run_id
    try:
        result = ray.get(ref)
    except Exception as exc:  # noqa: BLE001 (every task error is classified below)
        kind, message = _classify(exc)
    else:
        kind, message = {"completed": "completed", "preempted": "lost"}.get(result["status"], "failed"), \
            result["message"]
    if kind == "completed":
        outcome.completed.append(run_id)
        outcome.placement[run_id] = f"{result['host']}:{result['pid']}"
        if result["resumed_after_epochs"] is not None:
            outcome.resumed[run_id] = result["resumed_after_epochs"]
        return True
    if kind == "cancelled":
        outcome.cancelled.append(run_id)
        return True
    if kind == "lost" and attempt < settings.max_retries:
        # Not "running" any more, so the retry can claim it wherever it lands.
        ray.get(actor.call.remote("fail_run", (run_id, f"attempt {attempt + 1} lost: {message}; retrying"), {}))
        outcome.retries[run_id] = attempt + 1
        say(f"{run_id}: attempt {attempt + 1} lost ({message}); retry {attempt + 1}/{settings.max_retries}")
        submit(cfg, attempt + 1)
        return False
    if kind == "lost":
        message = f"gave up after {attempt + 1} lost attempt(s): {message}"
        ray.get(actor.call.remote("fail_run", (run_id, message), {}))
    outcome.failed[run_id] = message
    say(f"{run_id}: failed: {message}")
    return True


def run_one_ray(config: RunConfig, store_path: str | Path, settings: RaySettings, *,
                force: bool = False) -> RayGridOutcome:
    """One run on Ray (``python -m ltr train --executor ray``, dashboard jobs)."""
    grid = Grid(config.experiment or config.run_id, [config])
    return run_grid_ray(grid, store_path, settings, force=force, register=False)
