"""How many CPU threads a process's numeric work gets: the cores that are free, shared among workers.

Every torch user (training, the grid's trainer hosts, Ray tasks, dense encoding, BERTScore, the
embedded model) and the llama.cpp engine choose their threads here, once per process, from

- the **cores** this process may run on (``os.sched_getaffinity``; a container's or ``taskset``'s
  limit, not the machine's count);
- the **load**: the larger of the 1-minute load average and the tasks runnable right now other than
  this one (``/proc/loadavg``; the load average alone lags a minute behind a job that just started);
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

An environment variable overrides the choice: ``IRDASH_TORCH_THREADS`` for torch,
``IRDASH_LLM_THREADS`` for llama.cpp. Whatever is chosen is returned as a :class:`ThreadChoice`, so a
result can record its threads and the load they were chosen under.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass

TORCH_THREADS_ENV = "IRDASH_TORCH_THREADS"
WORKERS_ENV = "IRDASH_WORKERS"  # processes of one job sharing this machine's cores (set by the grid)
_RUNNABLE_SAMPLES = 5  # reads of /proc/loadavg, 10 ms apart: the median tells a busy machine from a blip


@dataclass(frozen=True)
class ThreadChoice:
    """The threads chosen, and what they were chosen from (recorded beside a result)."""

    threads: int
    cores: int  # cores this process may use
    load: float | None  # busy cores seen: max(1-minute load average, runnable tasks but this one)
    workers: int  # workers sharing the cores
    source: str  # "chosen" or the environment variable that set it
    counts_load: bool = True  # False: batched encoding, the worker's share whatever the load

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        if self.source != "chosen":
            return f"{self.threads} thread(s) ({self.source})"
        load = "unknown load" if self.load is None else f"load {self.load:.2f}"
        share = f", {self.workers} workers sharing them" if self.workers > 1 else ""
        rule = "" if self.counts_load else " (batched encoding: the load not counted)"
        return f"{self.threads} thread(s) of {self.cores} core(s) at {load}{share}{rule}"


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
    not with ``counts_load=False``, for batched encoding), at least one; ``env`` overrides."""
    cores = usable_cores()
    workers = env_workers() if workers is None else max(1, int(workers))
    forced = env_threads(env)
    if forced is not None:
        return ThreadChoice(forced, cores, None, workers, env)
    busy = busy_cores()
    share = max(1, cores // workers if at_most is None else min(cores // workers, int(at_most)))
    free = share if busy is None or not counts_load else int(cores - busy + 0.5)
    return ThreadChoice(max(1, min(share, free)), cores, busy, workers, "chosen", counts_load)


_TORCH_CHOICE: ThreadChoice | None = None


def torch_choice(*, at_most: int | None = None) -> ThreadChoice:
    """This process's torch threads, chosen at the first call (``at_most`` counts only then); later
    calls return the same choice, so every run or encoding of one process is timed on the same threads."""
    global _TORCH_CHOICE
    if _TORCH_CHOICE is None:
        _TORCH_CHOICE = choose_threads(TORCH_THREADS_ENV, at_most=at_most)
    return _TORCH_CHOICE


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
