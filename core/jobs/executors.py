"""How the worker starts and watches a job's process: the :class:`Executor` protocol and the local one."""
from __future__ import annotations

import os
import signal
import subprocess
from typing import TYPE_CHECKING, Protocol

from core.jobs.hosts import HostProcess
from core.jobs.records import JobError
from core.paths import PROJECT_ROOT, cache_dir, cache_subdir, load_config
from core.processes import proc_start_time

if TYPE_CHECKING:
    from core.jobs.records import Job


class Executor(Protocol):
    """How the worker starts and watches a job's process (local today, Ray later)."""

    def launch(self, job: Job) -> tuple[str, int | None]:
        """Start the job; return ``(handle, pid)`` (pid None when not a local process)."""

    def is_alive(self, job: Job) -> bool: ...

    def exit_code(self, job: Job) -> int | None:
        """The exit code of a job that is no longer alive (None when unknown: the process died)."""

    def terminate(self, job: Job, *, kill: bool = False) -> None: ...

    def adopt(self, job: Job) -> tuple[str, int | None] | None:
        """``(handle, pid)`` of a job launched by a worker that died before recording it, else None."""


# Runs the command, then records its exit code atomically; SIGTERM/SIGKILL to the process group
# ends the shell too, so a killed job leaves no exit file.
_WRAPPER = '"$@"; code=$?; echo $code > "$IRDASH_JOB_EXIT.tmp" && mv "$IRDASH_JOB_EXIT.tmp" "$IRDASH_JOB_EXIT"'


def visible_device(index: str) -> str:
    """The ``CUDA_VISIBLE_DEVICES`` value for GPU ``index`` as this process numbers its GPUs.

    ``cuda:N`` counts the GPUs this process sees: under ``CUDA_VISIBLE_DEVICES=2,3`` (a shared
    machine), ``cuda:0`` is physical GPU 2, so the child must get ``2``, not ``0`` (a GPU excluded).
    """
    visible = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if visible and index.isdigit() and int(index) < len(visible):
        return visible[int(index)]
    return index


HOSTED = "host"  # third field of a hosted job's handle


class LocalProcessExecutor:
    """Jobs as local processes in their own session; handle = ``"<pid>:<start time>"``.

    A job whose ``meta`` names a ``host`` (an argv, e.g. ``python -m ltr worker``) and a
    ``host_request`` runs instead in a long-lived host process of that argv and resource class
    (:class:`core.jobs.hosts.HostProcess`), reused by later jobs: handle
    ``"<host pid>:<start time>:host"``. Such a job ends when its exit file appears (the host lives
    on); cancelling it creates its ``.cancel`` file (the host stops that run within a step), and the
    worker's SIGKILL escalation kills the host, which runs nothing else meanwhile.
    """

    def __init__(self):
        self._children: dict[int, subprocess.Popen] = {}
        self._hosts: dict[tuple, list[HostProcess]] = {}

    def _env(self, job: Job) -> dict:
        env = dict(os.environ, IRDASH_CACHE_DIR=str(cache_dir()), PYTHONUNBUFFERED="1")
        if job.resource.startswith("cuda:"):
            env["CUDA_VISIBLE_DEVICES"] = visible_device(job.resource.split(":", 1)[1])
        return env

    def _launch_hosted(self, job: Job) -> tuple[str, int]:
        key = (job.resource, tuple(job.meta["host"]))
        pool = self._hosts.setdefault(key, [])
        pool[:] = [h for h in pool if h.alive()]
        host = next((h for h in pool if h.idle()), None)
        if host is None:
            host = HostProcess(job.meta["host"], env=self._env(job), log=cache_subdir("jobs") / "hosts.log")
            pool.append(host)
        job.cancel_path.unlink(missing_ok=True)
        host.send({**job.meta.get("host_request", {}), "log": str(job.log_path), "cancel": str(job.cancel_path)},
                  job.exit_path)
        return f"{host.pid}:{proc_start_time(host.pid) or ''}:{HOSTED}", host.pid

    def launch(self, job: Job) -> tuple[str, int]:
        job.exit_path.unlink(missing_ok=True)
        if job.meta.get("host"):
            return self._launch_hosted(job)
        env = dict(self._env(job), IRDASH_JOB_ID=str(job.id), IRDASH_JOB_EXIT=str(job.exit_path))
        with open(job.log_path, "ab") as log:
            proc = subprocess.Popen(["/bin/sh", "-c", _WRAPPER, "sh", *job.command], cwd=PROJECT_ROOT, env=env,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self._children[proc.pid] = proc
        return f"{proc.pid}:{proc_start_time(proc.pid) or ''}", proc.pid

    def is_alive(self, job: Job) -> bool:
        pid, _, rest = (job.handle or "").partition(":")
        started, _, kind = rest.partition(":")
        if not pid.isdigit():
            return False
        if kind == HOSTED and job.exit_path.exists():
            return False  # the host finished this job (and may run others)
        child = self._children.get(int(pid))
        if child is not None and child.poll() is not None:  # our own child: poll() reaps the zombie
            del self._children[int(pid)]
            return False
        now_started = proc_start_time(int(pid))
        return now_started is not None and (not started or now_started == started)

    def adopt(self, job: Job) -> tuple[str, int] | None:
        """Find the process a dead worker launched for ``job`` but had no time to record.

        The job's shell leads its own session and carries ``IRDASH_JOB_EXIT=<this job's exit file>``
        in its environment, which names the job and the cache uniquely.
        """
        needle = f"IRDASH_JOB_EXIT={job.exit_path}".encode()
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            try:
                if os.getsid(pid) != pid:
                    continue
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    if needle not in fh.read().split(b"\0"):
                        continue
            except OSError:
                continue
            started = proc_start_time(pid)
            if started is not None:
                return f"{pid}:{started}", pid
        return None

    def exit_code(self, job: Job) -> int | None:
        try:
            return int(job.exit_path.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def terminate(self, job: Job, *, kill: bool = False) -> None:
        if not self.is_alive(job):
            return
        if job.handle.endswith(f":{HOSTED}") and not kill:
            job.cancel_path.touch()  # the host cancels this run only (works from any process)
            return
        pid = int(job.handle.partition(":")[0])
        try:
            # The shell leads its own session, so its pid is the process-group id of the whole job.
            os.killpg(pid, signal.SIGKILL if kill else signal.SIGTERM)
        except ProcessLookupError:
            pass


def make_executor() -> Executor:
    name = load_config().get("jobs", {}).get("executor", "local")
    if name != "local":
        raise JobError(f"[jobs] executor = {name!r}: only 'local' is implemented")
    return LocalProcessExecutor()

