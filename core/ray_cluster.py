"""Ray settings and the connection to a Ray cluster (or a small local Ray instance).

Everything that runs work on Ray (``python -m ltr grid --executor ray``, dashboard jobs with the
Ray executor, LLM fan-out) reads its settings here. Sources, later wins:

1. defaults (:class:`RaySettings`);
2. ``[ray]`` in ``irdash.toml``::

       [ray]
       executor = "ray"            # default executor of dashboard training jobs (default "local")
       address = "auto"            # a running cluster: "auto", "host:6379" or "ray://head:10001";
                                   # unset: start a local Ray instance for this process
       cpus_per_run = 1            # CPUs a CPU run asks for (torch uses that many threads)
       gpus_per_run = 1            # GPUs a run that wants CUDA asks for
       max_retries = 3             # retries of a run whose worker or node was lost
       checkpoint_dir = "s3://bucket/irdash-ckpt"   # any fsspec URL or path; default beside the store
       ship_code = false           # true: upload this checkout to the cluster (runtime_env working_dir)

3. environment: ``IRDASH_RAY_ADDRESS``, ``IRDASH_RAY_CHECKPOINT_DIR``.

Without an address a *local* instance starts, sized for a shared workstation: ``local_cpus`` CPUs
(default: all cores), no Ray dashboard, an object store of ``local_object_store_mb`` MB (runs pass
configs and metrics, never tensors, through it), and every server it starts (GCS, raylet, workers,
agents) listening on 127.0.0.1 only (:func:`_single_node_mode`). Joining a cluster, the user's ``address``
decides where to connect; that cluster's own binding is its administrator's choice.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Mapping

from core.paths import PROJECT_ROOT, load_config
from core.signals import restore_native_handlers

EXECUTORS = ("local", "ray")
NAMESPACE = "irdash"
ADDRESS_ENV = "IRDASH_RAY_ADDRESS"
CHECKPOINT_ENV = "IRDASH_RAY_CHECKPOINT_DIR"
# Shipped with ship_code = true: never the venv, caches or data.
CLUSTER_JOB_LIMIT = 32
SHIP_EXCLUDES = [".venv/", "cache/", ".git/", "test-artifacts/", "*.sqlite", "*.pt", "__pycache__/"]


class RayConfigError(ValueError):
    """A bad ``[ray]`` setting or flag (one line naming it)."""


@dataclass(frozen=True)
class RaySettings:
    executor: str = "local"
    address: str | None = None
    cpus_per_run: float = 1.0
    gpus_per_run: float = 1.0
    max_retries: int = 3
    checkpoint_dir: str | None = None
    ship_code: bool = False
    local_cpus: int | None = None
    local_object_store_mb: int = 200

    def __post_init__(self):
        if self.executor not in EXECUTORS:
            raise RayConfigError(f"executor {self.executor!r}: choose from {', '.join(EXECUTORS)}")
        if self.cpus_per_run <= 0 or self.gpus_per_run <= 0:
            raise RayConfigError("cpus_per_run and gpus_per_run must be > 0")
        if self.max_retries < 0:
            raise RayConfigError("max_retries must be >= 0")

    def with_overrides(self, **values: Any) -> "RaySettings":
        """A copy with the given fields replaced, ``None`` values ignored (unset CLI flags)."""
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def ray_settings() -> RaySettings:
    """The settings from ``irdash.toml`` ``[ray]`` and the environment (see the module docstring)."""
    section = dict(load_config().get("ray", {}))
    known = {f.name for f in fields(RaySettings)}
    unknown = sorted(set(section) - known)
    if unknown:
        raise RayConfigError(f"irdash.toml [ray]: unknown key(s) {unknown}; known: {sorted(known)}")
    env = {"address": os.environ.get(ADDRESS_ENV) or None, "checkpoint_dir": os.environ.get(CHECKPOINT_ENV) or None}
    return RaySettings(**section).with_overrides(**env)


def connect(settings: RaySettings | None = None, *, log_to_driver: bool = True) -> dict:
    """Connect this process to Ray once; returns ``ray.cluster_resources()``.

    Reuses a connection this process already has (a test's local instance, a second grid in one
    process). ``address`` set: join that cluster; unset: start a local instance.
    """
    import ray

    settings = settings or ray_settings()
    if not ray.is_initialized():
        if settings.ship_code:
            runtime_env: dict = {"working_dir": str(PROJECT_ROOT), "excludes": SHIP_EXCLUDES}
        else:
            # The cluster's nodes have this checkout at the same path (the usual shared home).
            runtime_env = {"env_vars": {"PYTHONPATH": str(PROJECT_ROOT)}}
        if settings.address:
            # a loopback address is a local instance of this machine (e.g. another driver's): join it
            # as a loopback node too, or Ray would look for it at the machine's routable IP
            with _single_node_mode(_is_loopback(settings.address)):
                ray.init(address=settings.address, namespace=NAMESPACE, runtime_env=runtime_env,
                         log_to_driver=log_to_driver)
        else:
            with _single_node_mode(True):
                ray.init(num_cpus=settings.local_cpus or os.cpu_count(), include_dashboard=False,
                         object_store_memory=settings.local_object_store_mb * 1024 * 1024, namespace=NAMESPACE,
                         runtime_env=runtime_env, log_to_driver=log_to_driver, _node_ip_address=LOCAL_HOST)
        restore_native_handlers()  # ray.init replaced an in-process JVM's signal handlers (core.signals)
    return dict(ray.cluster_resources())


def disconnect() -> None:
    """``ray.shutdown()``, then the signal handlers it reset put back (an in-process JVM's: :mod:`core.signals`)."""
    import ray

    ray.shutdown()
    restore_native_handlers()


LOCAL_HOST = "127.0.0.1"


def _is_loopback(address: str) -> bool:
    host = address.split("://")[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


@contextmanager
def _single_node_mode(on: bool):
    """While ``on``: Ray treats this machine as a single node whose IP is 127.0.0.1.

    Why: Ray's servers listen on every interface unless the node's IP is literally 127.0.0.1 (its C++
    servers then bind to 127.0.0.1), but ``ray.init`` (2.60) replaces a loopback node or cluster
    address by the machine's routable IP unless "clusters are disabled" (its Windows/macOS mode,
    ``ray_constants.ENABLE_RAY_CLUSTER``, read when an address is resolved). A local instance is one
    node, so it is that mode by definition; the flag is switched off for one ``ray.init`` only.
    """
    if not on:
        yield
        return
    from ray._private import ray_constants

    previous = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = previous


def run_resources(settings: RaySettings, *, wants_cuda: bool) -> dict[str, float]:
    """The Ray resource request of one run: one run = ``gpus_per_run`` GPUs or ``cpus_per_run`` CPUs.

    A GPU run asks for no CPU slot of its own, so a node's GPUs are not left idle behind its
    CPU count.
    """
    if wants_cuda:
        return {"num_gpus": settings.gpus_per_run, "num_cpus": 0}
    return {"num_cpus": settings.cpus_per_run}


class FileService:
    """Base of the actor bodies :func:`node_service` starts: remembers the file (device, inode) it opened."""

    def _bind_file(self, path: str) -> None:
        self._bound = (path, _file_id(path))

    def serves(self, path: str) -> bool:
        """Whether ``path`` is still the file this actor opened (not deleted and re-created since)."""
        return (path, _file_id(path)) == self._bound


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def node_service(actor_body: type, path: str | Path, *, prefix: str):
    """The actor serving the file ``path`` from this process's node: ``actor_body(path)`` as a Ray actor.

    For files that only this node can open (a SQLite store): the actor is pinned here, holds no CPU
    slot, and is named after the node and the file and detached, so every driver on this node that
    uses the file shares one warm actor (on a local Ray instance it ends with the instance).
    ``actor_body`` is a :class:`FileService` that binds the file it opens: an actor whose file was
    deleted or replaced since (its writes would be lost) is killed and a new one started.
    """
    import hashlib

    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    path = str(Path(path).resolve())
    node = ray.get_runtime_context().get_node_id()
    name = f"{prefix}-{node[:12]}-{hashlib.sha256(path.encode()).hexdigest()[:12]}"
    actor_cls = ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1)(actor_body)
    options = dict(name=name, lifetime="detached", get_if_exists=True,
                   scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
    for _attempt in range(50):
        actor = actor_cls.options(**options).remote(path)
        # Waiting here also means the file is open before anything depends on the actor.
        if ray.get(actor.serves.remote(path)):
            return actor
        ray.kill(actor)
        time.sleep(0.1)  # the name is released asynchronously
    raise RuntimeError(f"could not start the actor serving {path}")


def default_job_limit() -> int:
    """How many dashboard jobs of resource class ``ray`` run at once by default.

    Such a job is a light driver; on a cluster Ray queues its task until resources free up, so
    many may wait at once. Without a cluster each job starts its own local Ray instance, so one at
    a time (several instances would each claim every core).
    """
    try:
        return CLUSTER_JOB_LIMIT if ray_settings().address else 1
    except RayConfigError:
        return 1  # the job itself reports the bad setting


def describe(resources: Mapping[str, float]) -> str:
    """``"8 CPU, 2 GPU"`` from ``ray.cluster_resources()``."""
    return ", ".join(f"{resources[k]:g} {k}" for k in ("CPU", "GPU") if resources.get(k)) or "no resources"
