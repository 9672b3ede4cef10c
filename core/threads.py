"""How many CPU threads a process's numeric work gets: the cores that are free, shared among workers.

Every torch user (training, the grid's trainer hosts, Ray tasks, dense encoding, BERTScore, the
embedded model) and the llama.cpp engine choose their threads here, from

- the **cores** this process may run on: ``os.sched_getaffinity`` (``taskset``'s or a cpuset's limit,
  not the machine's count), and no more than a container's **CPU quota** (cgroup v2 ``cpu.max``, v1
  ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``, rounded down): a quota of 2 cores on a 64-core node
  throttles 64 threads to 2 cores' time, which stalls them as descheduling does;
- the **load**: the larger of the 1-minute load average and the tasks runnable right now other than
  this one (``/proc/loadavg``; the load average alone lags a minute behind a job that just started).
  Under a quota those are the whole host's (other containers'), which do not take this container's
  quota: there the load is what the container's other processes use, its cgroup's CPU usage counter
  over a short window less this process's own CPU time;
- the **workers** sharing the machine (a grid's ``--workers``: the grid sets ``IRDASH_WORKERS`` in
  each host it starts, a Ray task passes its CPUs), each getting at most its share of the cores.

Why not every core: torch's OpenMP threads and llama.cpp's threads wait for each other at every
operation, so one thread descheduled by another process stalls them all and the waiting threads
spin, burning CPU time that the wall time then shows (CPU seconds = wall seconds in the slow runs).
``bench/bench_busy.py`` measures it side by side (default threads, these threads, one thread; quiet
and beside two CPU-bound processes) and prints the figures.

Two kinds of work, measured apart by the bench: **small steps** (a ranker's training step, one
sequence's decode) give up threads the load takes, since a descheduled thread stalls every step
(at torch's default, several times slower than one thread beside two CPU-bound processes);
**batched encoding** (dense retrieval, BERTScore: matrices of a whole batch of texts) keeps the
worker's share of the cores whatever the load (:func:`encoder_choice`), since there each thread's
share of a batch outweighs the waiting: in ``bench/bench_busy.py`` two threads encoded faster than
one both quiet and beside two CPU-bound processes, while a load-aware choice took one thread on a
quiet machine whose 1-minute average still counted a job that had just ended.

A process chooses its torch threads once (:func:`torch_choice`), and a long-lived one chooses again at
each run or job it starts (:func:`choose_torch_threads`: the grid's and the dashboard's trainer hosts,
a Ray worker per task, whose CPUs, ``at_most``, count for CUDA tasks too), so a host started on a busy
machine does not keep one thread when it has gone quiet, nor every core when it has become busy; each
run records the choice it trained on.

An environment variable overrides the choice: ``IRDASH_TORCH_THREADS`` for torch,
``IRDASH_LLM_THREADS`` for llama.cpp. Whatever is chosen is returned as a :class:`ThreadChoice`, so a
result can record its threads and the load they were chosen under.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

TORCH_THREADS_ENV = "IRDASH_TORCH_THREADS"
WORKERS_ENV = "IRDASH_WORKERS"  # processes of one job sharing this machine's cores (set by the grid)
_RUNNABLE_SAMPLES = 5  # reads of /proc/loadavg, 10 ms apart: the median tells a busy machine from a blip
CGROUP_ROOT = Path("/sys/fs/cgroup")  # where the cgroup file systems are mounted (tests point it elsewhere)
PROC_SELF_CGROUP = Path("/proc/self/cgroup")  # this process's cgroup in each hierarchy
_USAGE_WINDOW_SECONDS = 0.05  # the window over which a quota'd container's CPU usage is read


@dataclass(frozen=True)
class ThreadChoice:
    """The threads chosen, and what they were chosen from (recorded beside a result)."""

    threads: int
    cores: int  # cores this process may use
    load: float | None  # busy cores seen: max(1-minute load average, runnable tasks but this one)
    workers: int  # workers sharing the cores
    source: str  # "chosen" or the environment variable that set it
    counts_load: bool = True  # False: batched encoding, the worker's share whatever the load
    quota: float | None = None  # the cgroup's CPU quota in cores (None: none); then ``load`` is the cgroup's

    def as_dict(self) -> dict:
        out = asdict(self)
        if self.quota is None:  # recorded only where there is one, so records without stay as they were
            out.pop("quota")
        return out

    def describe(self) -> str:
        if self.source != "chosen":
            return f"{self.threads} thread(s) ({self.source})"
        where = "" if self.quota is None else " in the container"
        load = "unknown load" if self.load is None else f"load {self.load:.2f}{where}"
        quota = "" if self.quota is None else f" (CPU quota {self.quota:g})"
        share = f", {self.workers} workers sharing them" if self.workers > 1 else ""
        rule = "" if self.counts_load else " (batched encoding: the load not counted)"
        return f"{self.threads} thread(s) of {self.cores} core(s){quota} at {load}{share}{rule}"


@dataclass(frozen=True)
class CpuQuota:
    """A cgroup's CPU limit on this process: ``cores`` = quota / period, set in ``limit_file``; the
    cgroup's CPU time used so far is ``usage_file``'s counter (or a ``usage_usec`` line) x ``usage_unit``."""

    cores: float
    limit_file: Path
    usage_file: Path | None
    usage_unit: float  # seconds per unit of the counter

    def used_seconds(self) -> float | None:
        """The CPU seconds the cgroup's processes have used (None where unreadable)."""
        if self.usage_file is None:
            return None
        try:
            text = self.usage_file.read_text()
        except OSError:
            return None
        for line in text.splitlines():  # v2 cpu.stat: "usage_usec N"; v1 cpuacct.usage: "N"
            parts = line.split()
            if parts and (len(parts) == 1 or parts[0] == "usage_usec"):
                try:
                    return int(parts[-1]) * self.usage_unit
                except ValueError:
                    return None
        return None


def _cgroup_paths(self_cgroup: Path) -> dict[str, str]:
    """``{controller: path}`` of this process (``"": path`` for the v2 unified hierarchy)."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in (parts[1].split(",") if parts[1] else [""]):
                out[controller] = parts[2]
    return out


def _own_then_parents(mount: Path, path: str) -> list[Path]:
    """The cgroup folder of ``path`` under ``mount`` and each parent up to the mount (the effective limit is
    the smallest along the way); a path not visible there (a container's namespace) is the mount itself."""
    folder = mount / path.lstrip("/")
    if not folder.is_dir():
        return [mount]
    return [folder, *[p for p in folder.parents if p == mount or mount in p.parents]]


def _read_ints(path: Path) -> list[str] | None:
    try:
        return path.read_text().split()
    except OSError:
        return None


def cgroup_cpu_quota(root: Path | None = None, self_cgroup: Path | None = None) -> CpuQuota | None:
    """This process's CPU quota from cgroup v2 ``cpu.max`` or v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``
    (the smallest along its cgroup's ancestry); None where there is none or no cgroup file system. A file
    that cannot be read as a quota is named."""
    root = CGROUP_ROOT if root is None else Path(root)
    paths = _cgroup_paths(PROC_SELF_CGROUP if self_cgroup is None else Path(self_cgroup))
    found: list[CpuQuota] = []
    if "" in paths and (root / "cgroup.controllers").exists():  # v2: one hierarchy mounted at the root
        folders = _own_then_parents(root, paths[""])
        for folder in folders:
            fields = _read_ints(folder / "cpu.max")
            if not fields or fields[0] == "max":
                continue
            try:
                quota, period = int(fields[0]), int(fields[1]) if len(fields) > 1 else 100_000
            except ValueError:
                raise ValueError(f"{folder / 'cpu.max'}: {' '.join(fields)!r} is not 'QUOTA PERIOD' or 'max'") from None
            # the usage of every process under this quota (a pod's containers share a parent's quota)
            found.append(CpuQuota(quota / period, folder / "cpu.max", folder / "cpu.stat", 1e-6))
    elif "cpu" in paths:  # v1: the cpu controller's own mount ("cpu" or "cpu,cpuacct")
        mount = next((root / name for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu") if (root / name).is_dir()), None)
        acct = next((root / name for name in ("cpuacct", "cpu,cpuacct", "cpuacct,cpu") if (root / name).is_dir()), None)
        for folder in ([] if mount is None else _own_then_parents(mount, paths["cpu"])):
            quota, period = _read_ints(folder / "cpu.cfs_quota_us"), _read_ints(folder / "cpu.cfs_period_us")
            if not quota or not period or quota[0] == "-1":
                continue
            try:
                cores = int(quota[0]) / int(period[0])
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"{folder / 'cpu.cfs_quota_us'}: {quota[0]!r} / {period[0]!r} is not a quota") from None
            usage = None  # the same cgroup's counter in the cpuacct hierarchy (the one mount when joined)
            if acct is not None and (acct / folder.relative_to(mount) / "cpuacct.usage").is_file():
                usage = acct / folder.relative_to(mount) / "cpuacct.usage"
            found.append(CpuQuota(cores, folder / "cpu.cfs_quota_us", usage, 1e-9))
    return min(found, key=lambda q: q.cores) if found else None


_clock = time.monotonic  # the window's clock and pause (tests replace them to play a container's usage)
_pause = time.sleep


def cgroup_busy_cores(quota: CpuQuota, window: float = _USAGE_WINDOW_SECONDS) -> float | None:
    """Cores the cgroup's *other* processes keep busy: its CPU usage over ``window`` seconds less this
    process's own CPU time in it; None where the counter is unreadable."""
    used, own, start = quota.used_seconds(), time.process_time(), _clock()
    if used is None:
        return None
    _pause(window)
    used_after, own_after, elapsed = quota.used_seconds(), time.process_time(), _clock() - start
    if used_after is None or elapsed <= 0:
        return None
    return max(0.0, ((used_after - used) - (own_after - own)) / elapsed)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def runnable_others() -> float | None:
    """Tasks runnable right now, this reader excluded (median of a few reads of ``/proc/loadavg``'s
    ``running/total`` field); None where there is no such file."""
    counts = []
    for i in range(_RUNNABLE_SAMPLES):
        try:
            with open("/proc/loadavg") as fh:
                running = fh.read().split()[3].split("/")[0]
        except (OSError, IndexError):
            return None
        counts.append(max(0, int(running) - 1))
        if i + 1 < _RUNNABLE_SAMPLES:
            time.sleep(0.01)
    return float(sorted(counts)[len(counts) // 2])


def busy_cores() -> float | None:
    """Cores other work keeps busy: the larger of the 1-minute load average and the tasks runnable now."""
    seen = []
    try:
        seen.append(os.getloadavg()[0])
    except OSError:
        pass
    now = runnable_others()
    if now is not None:
        seen.append(now)
    return max(seen) if seen else None


def env_workers() -> int:
    """The workers sharing this machine as the grid declared them (``IRDASH_WORKERS``), else 1."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    try:
        return max(1, int(value)) if value else 1
    except ValueError:
        raise ValueError(f"{WORKERS_ENV}={value!r}: expected a whole number of workers") from None


def env_threads(env: str) -> int | None:
    """The thread count set in ``env`` (None when unset); a value that is not a count is named."""
    value = os.environ.get(env, "").strip()
    if not value:
        return None
    try:
        return max(1, int(value))
    except ValueError:
        raise ValueError(f"{env}={value!r}: expected a whole number of threads") from None


def choose_threads(env: str = TORCH_THREADS_ENV, *, workers: int | None = None,
                   at_most: int | None = None, counts_load: bool = True) -> ThreadChoice:
    """Threads for one worker: its share of the cores (cores // workers, and no more than ``at_most``,
    e.g. the CPUs a Ray task was given), fewer when the load leaves fewer free (cores - load, rounded;
    not with ``counts_load=False``, for batched encoding), at least one; ``env`` overrides. Under a
    cgroup CPU quota the cores are at most the quota and the load is the container's (module docstring)."""
    cores = usable_cores()
    quota = cgroup_cpu_quota()
    if quota is not None:
        cores = max(1, min(cores, int(quota.cores)))
    workers = env_workers() if workers is None else max(1, int(workers))
    forced = env_threads(env)
    if forced is not None:
        return ThreadChoice(forced, cores, None, workers, env, quota=None if quota is None else quota.cores)
    busy = busy_cores() if quota is None else cgroup_busy_cores(quota)
    share = max(1, cores // workers if at_most is None else min(cores // workers, int(at_most)))
    free = share if busy is None or not counts_load else int(cores - busy + 0.5)
    return ThreadChoice(max(1, min(share, free)), cores, busy, workers, "chosen", counts_load,
                        None if quota is None else quota.cores)


_TORCH_CHOICE: ThreadChoice | None = None


def torch_choice(*, at_most: int | None = None) -> ThreadChoice:
    """This process's current torch threads: chosen at the first call (``at_most`` counts only then),
    or at the last :func:`choose_torch_threads` (a long-lived process's run or job)."""
    global _TORCH_CHOICE
    if _TORCH_CHOICE is None:
        _TORCH_CHOICE = choose_threads(TORCH_THREADS_ENV, at_most=at_most)
    return _TORCH_CHOICE


def choose_torch_threads(*, at_most: int | None = None) -> ThreadChoice:
    """Choose this process's torch threads afresh and apply them: called at the start of each run or job of
    a long-lived process (a trainer host, a Ray worker), so each chooses from the machine as it is then;
    everything in that run (NeuralLoss's pre-training, the epochs) uses this choice."""
    global _TORCH_CHOICE
    _TORCH_CHOICE = choose_threads(TORCH_THREADS_ENV, at_most=at_most)
    return apply_torch_threads()


_ENCODER_CHOICE: ThreadChoice | None = None


def encoder_choice() -> ThreadChoice:
    """This process's threads for batched encoding (dense retrieval, BERTScore): the worker's share of
    the cores whatever the load (module docstring), chosen once; ``IRDASH_TORCH_THREADS`` overrides."""
    global _ENCODER_CHOICE
    if _ENCODER_CHOICE is None:
        _ENCODER_CHOICE = choose_threads(TORCH_THREADS_ENV, counts_load=False)
    return _ENCODER_CHOICE


def apply_torch_threads(*, at_most: int | None = None) -> ThreadChoice:
    """:func:`torch_choice`, applied to torch (``torch.set_num_threads``, again if a library changed it)."""
    import torch

    choice = torch_choice(at_most=at_most)
    if torch.get_num_threads() != choice.threads:
        torch.set_num_threads(choice.threads)
    return choice


@contextmanager
def using_torch_threads(n: int | None = None):
    """Torch on ``n`` threads (default: :func:`torch_choice`'s) inside the block, the previous count after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n or torch_choice().threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def forget_torch_choice() -> None:
    """Choose again at the next :func:`torch_choice` (tests; a long-lived process told the load changed)."""
    global _TORCH_CHOICE, _ENCODER_CHOICE
    _TORCH_CHOICE = _ENCODER_CHOICE = None
