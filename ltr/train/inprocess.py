"""Training many runs in one process: each fold's data loaded once, every run isolated from the others.

A new trainer process pays seconds of start-up (importing torch, then torch._dynamo through Adam)
and re-reads its fold; a grid of short runs spends most of its time there. :func:`train_runs` trains
a list of runs one after another in the calling process, and is the one entry point for every host
of runs: the grid's worker processes and the dashboard's job host (both ``python -m ltr worker``,
:mod:`ltr.train.host`), and a Ray actor would call it the same way.

What stays isolated per run:

- **seed**: :func:`ltr.train.prepare.prepare_run` seeds torch before building the ranker and the
  batches draw from ``numpy.random.default_rng([seed, epoch])``, so a run gives the same result
  here as in a fresh process (``tests/ltr/train/test_inprocess.py`` checks it);
- **store rows**: each run registers, logs and finishes its own rows (:func:`train_run`);
- **failure**: a run that raises is marked ``failed`` in the store and the next run starts;
- **cancel**: a per-run :class:`threading.Event` stops only that run (marked ``cancelled``);
- **threads**: each run chooses its torch threads afresh at its start (:func:`core.threads.choose_torch_threads`),
  from the machine as it is then, and records them, so a host started on a busy machine is not held
  to one thread for its life (nor to every core once the machine got busy).

Fold data are kept by :class:`FoldCache` (the last ``capacity`` folds, read-only numpy arrays: every
run builds its own device tensors from them), keyed by the *content* of the fold's files (their
SHA-256, memoised on path, size, mtime and inode by :func:`ltr.data.cache.file_digest`) and how the
data set reads them, not by the name a run gives: a long-lived host never trains on a fold whose files
changed since it read them, and the same files under two names (``mq2008`` and its folder) are read
once. Runs are ordered by ``(data, fold)`` so a worker reads each fold once.
"""
from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from core.threads import choose_torch_threads
from ltr.store import RunStore
from ltr.train.config import RunCancelled, RunConfig, RunInputError, one_line
from ltr.train.prepare import prepare_run
from ltr.train.run import RunResult, train_run

SPLITS = ("train", "vali", "test")
# Exit statuses of a run, as ``python -m ltr train`` reports them.
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130


def fold_content_key(data: str, fold: int) -> tuple:
    """What a fold's splits are made of: the SHA-256 of each split's file and the data set's reading of them
    (width, sparse, query normalisation); raises like :func:`ltr.data.datasets.load_fold` for a bad name."""
    from ltr.data.cache import file_digest
    from ltr.data.datasets import DatasetError, resolve_dataset

    spec, folder = resolve_dataset(data)
    files = [folder / f"Fold{int(fold)}" / f"{split}.txt" for split in SPLITS]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise DatasetError(f"missing fold file {missing[0]}")
    return (tuple(file_digest(f) for f in files), spec.n_features, spec.sparse, spec.query_normalise)


class FoldCache:
    """The splits of the most recently used folds, keyed by their content (:func:`fold_content_key`)."""

    def __init__(self, capacity: int = 2):
        self.capacity = capacity
        self._folds: OrderedDict[tuple, dict] = OrderedDict()
        self.loads = 0  # folds read from disk (the cache's misses), for tests and benchmarks

    def splits(self, data: str, fold: int) -> dict:
        """``{"train", "vali", "test": RankingDataset}`` of the fold, read on first use of its content."""
        from ltr.data.datasets import load_fold

        key = fold_content_key(data, fold)
        if key in self._folds:
            self._folds.move_to_end(key)
            return self._folds[key]
        splits = {split: load_fold(data, fold, split) for split in SPLITS}
        self.loads += 1
        self._folds[key] = splits
        while len(self._folds) > self.capacity:
            self._folds.popitem(last=False)
        return splits

    def clear(self) -> None:
        self._folds.clear()


FOLDS = FoldCache()


@dataclass
class RunOutcome:
    """How one run of :func:`train_runs` ended; ``exit_code`` as ``python -m ltr train`` would exit."""

    run_id: str
    status: str  # completed | failed | cancelled | bad input
    exit_code: int
    message: str = ""
    result: RunResult | None = None


def train_one(config: RunConfig, store: RunStore, *, resume: bool = True, force: bool = False,
              cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None,
              folds: FoldCache = FOLDS, threads_at_most: int | None = None) -> RunOutcome:
    """Train one run in this process with its fold from ``folds``; never raises for the run's own errors.

    Its torch threads are chosen afresh (at most ``threads_at_most``: a Ray task's CPUs, CUDA or not).

    Bad input (the fold cannot be read, a config clash) is reported as ``bad input`` with nothing
    stored; a crash is stored as ``failed`` by :func:`train_run` and reported; a cancel as ``cancelled``.
    """
    run_id = config.run_id
    try:
        try:  # before prepare_run: NeuralLoss pre-trains on them
            choose_torch_threads(at_most=threads_at_most)
        except ValueError as exc:  # IRDASH_TORCH_THREADS or a cgroup file that is not a count: named, nothing stored
            raise RunInputError(one_line(exc)) from None
        try:
            splits = folds.splits(config.data, config.fold)
        except Exception:  # noqa: BLE001 - prepare_run below re-reads and reports it as one clear line
            splits = None
        prepared = prepare_run(config, splits=splits)
        result = train_run(config, store, resume, force=force, prepared=prepared, progress=progress, cancel=cancel)
    except RunInputError as exc:
        return RunOutcome(run_id, "bad input", EXIT_BAD_INPUT, one_line(exc))
    except RunCancelled as exc:
        return RunOutcome(run_id, "cancelled", EXIT_CANCELLED, one_line(exc))
    except Exception as exc:  # noqa: BLE001 - stored with its traceback by train_run; the next run goes on
        return RunOutcome(run_id, "failed", EXIT_FAILED, f"{type(exc).__name__}: {one_line(exc)}")
    finally:
        gc.collect()  # the run's model, optimiser and device tensors go before the next run allocates
    return RunOutcome(run_id, "completed", EXIT_OK, "" if result.retrained else "already completed", result)


def train_runs(configs: Sequence[RunConfig], store_path: str | Path | None = None, *, force: bool = False,
               cancel: threading.Event | None = None, progress: Callable[[str], None] | None = None,
               folds: FoldCache = FOLDS) -> list[RunOutcome]:
    """Train these runs in this process, ordered by ``(data, fold)``; one outcome per run, in that order.

    A run that fails or is cancelled does not stop the others; ``cancel`` (shared by all) stops the
    current run and skips the rest.
    """
    ordered = sorted(configs, key=lambda c: (c.data, c.fold))
    outcomes = []
    with RunStore(store_path) as store:
        for config in ordered:
            if cancel is not None and cancel.is_set():
                outcomes.append(RunOutcome(config.run_id, "cancelled", EXIT_CANCELLED, "not started"))
                continue
            outcomes.append(train_one(config, store, force=force, cancel=cancel, progress=progress, folds=folds))
    return outcomes
