"""The run store for trainers on Ray workers: one actor beside the SQLite file writes for all of them.

The store stays the one source of truth when runs train on other machines. A :class:`StoreService`
actor runs on the driver's node (pinned there, since the SQLite file is a local file) and owns the
only connection the remote runs write through. A trainer on a Ray worker gets a
:class:`RemoteRunStore`: the same methods :func:`ltr.train.train_run` calls on a
:class:`ltr.store.RunStore`, forwarded to the actor.

Two kinds of calls:

- *posted* (``log_steps``, ``heartbeat``): fire-and-forget; the actor buffers them and writes every
  run's pending steps and heartbeats in one transaction (:meth:`RunStore.log_steps_many`) at most
  ``flush_seconds`` after they arrive, or at once when ``max_pending`` rows wait. So live charts
  see remote steps within a fraction of a second, and 100 runs cost one write per flush, not 100.
- *called* (everything else: claims, epochs, results, reads): the actor first writes what is
  pending, then runs the method and the caller waits for it. Errors come back as the store's own
  exceptions (``RunBusy``, ``RunConfigMismatch``).

Ordering: Ray runs one caller's calls to a (single-threaded) actor in submission order, so a
run's posted steps are always written before its next called ``log_epoch``; the trainer saves its
checkpoint only after ``log_epoch`` returns, so a checkpoint never refers to an epoch the store
lacks (the same invariant as the local trainer's).
"""
from __future__ import annotations

import os
import socket
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from core.ray_cluster import FileService, node_service
from ltr.store import RunStore

POSTED = ("log_steps", "heartbeat")
CALLED = ("register_experiment", "register_run", "start_run", "record_code", "log_epoch", "truncate_after",
          "finish_run", "fail_run", "delete_run", "find_run", "get_run", "list_runs", "step_series", "step_summary",
          "step_metric_names", "epoch_series", "per_query", "counts", "reap_stale_runs")
FLUSH_SECONDS = 0.25
MAX_PENDING_ROWS = 20_000


class StoreService(FileService):
    """The writer actor's body (plain class; :func:`store_service` makes it a Ray actor)."""

    def __init__(self, path: str, flush_seconds: float = FLUSH_SECONDS, max_pending: int = MAX_PENDING_ROWS):
        self._store = RunStore(path)
        self._bind_file(path)
        self._lock = threading.Lock()
        self._steps: dict[str, list] = defaultdict(list)
        self._beats: set[str] = set()
        self._pending_rows = 0
        self._max_pending = max_pending
        self.writes = 0  # transactions spent on posted calls (the batching, observable)
        self._stop = threading.Event()
        # The flusher writes what waits even when no further call arrives (the last steps of an epoch).
        self._flusher = threading.Thread(target=self._flush_loop, args=(flush_seconds,), daemon=True)
        self._flusher.start()

    def post(self, method: str, args: tuple, kwargs: dict) -> None:
        if method not in POSTED:
            raise ValueError(f"{method} cannot be posted")
        run_id = kwargs.get("run_id", args[0] if args else None)
        with self._lock:
            if method == "log_steps":
                rows = list(kwargs.get("rows", args[1] if len(args) > 1 else []))
                self._steps[run_id].extend(rows)
                self._pending_rows += len(rows)
            else:
                self._beats.add(run_id)
            if self._pending_rows >= self._max_pending:
                self._flush_locked()

    def call(self, method: str, args: tuple, kwargs: dict) -> Any:
        if method not in CALLED:
            raise ValueError(f"{method} is not a run-store method a remote run may call")
        with self._lock:
            self._flush_locked()
            return getattr(self._store, method)(*args, **kwargs)

    def flush(self) -> int:
        """Write what is pending now; returns the number of write transactions so far."""
        with self._lock:
            self._flush_locked()
            return self.writes


    def _flush_locked(self) -> None:
        if not self._steps and not self._beats:
            return
        steps, beats = dict(self._steps), set(self._beats)
        self._steps, self._beats, self._pending_rows = defaultdict(list), set(), 0
        self._store.log_steps_many(steps, heartbeats=beats)
        self.writes += 1

    def _flush_loop(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            with self._lock:
                self._flush_locked()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._flush_locked()
            self._store.close()


def store_service(path: str | Path):
    """The :class:`StoreService` actor of the store at ``path`` on this process's node (started if needed).

    One per (node, store file), shared by every driver there (each dashboard job is a driver), so the
    second grid or job finds it warm instead of paying for a new actor process; see
    :func:`core.ray_cluster.node_service`.
    """
    return node_service(StoreService, path, prefix="irdash-store")


class RemoteRunStore:
    """What a trainer on a Ray worker uses as its run store: ``RunStore``'s methods, through the actor.

    ``path`` is not the SQLite file (that lives on the driver's node) but anchors the checkpoint
    folder the trainer uses (``<path parent>/checkpoints/<run_id>.pt``, see
    :func:`ltr.train.checkpoint_path`), which :mod:`ltr.ray_runner` points at the shared location.
    """

    def __init__(self, actor, checkpoint_parent: str | Path):
        self._actor = actor
        self.path = Path(checkpoint_parent) / "runs.sqlite"
        self.host, self.pid = socket.gethostname(), os.getpid()

    def _call(self, method: str, *args, **kwargs):
        import ray

        return ray.get(self._actor.call.remote(method, args, kwargs))

    def _post(self, method: str, *args, **kwargs) -> None:
        self._actor.post.remote(method, args, kwargs)

    def start_run(self, run_id: str, *, device: str, pid: int | None = None, threads: int | None = None) -> None:
        # Recorded as this worker process on this node (its start time and load read here): the
        # store's liveness checks judge the trainer, not the writer actor.
        from core.processes import proc_start_time

        pid = pid or self.pid
        self._call("start_run", run_id, device=device, pid=pid, host=self.host, pid_started=proc_start_time(pid),
                   load=os.getloadavg()[0], threads=threads)

    def log_steps(self, run_id: str, rows) -> None:
        self._post("log_steps", run_id, list(rows))

    def heartbeat(self, run_id: str) -> None:
        self._post("heartbeat", run_id)

    def __getattr__(self, method: str):
        if method not in CALLED:
            raise AttributeError(method)
        return lambda *args, **kwargs: self._call(method, *args, **kwargs)

    def close(self) -> None:
        pass  # the actor belongs to the driver

    def __enter__(self) -> "RemoteRunStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
