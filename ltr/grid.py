"""Experiment grids: data sets x folds x losses x rankers x seeds, from a TOML/YAML file or flags.

A grid file (TOML shown; YAML has the same structure)::

    name = "learndcg-study"               # the experiment name recorded with every run
    data = ["mq2007", "mq2008"]           # registry names or folders of FoldK/
    folds = [1, 2, 3, 4, 5]
    losses = ["approxndcg", "learndcg"]
    models = ["mlp"]
    seeds = [0]                           # optional, default [0]

    [train]                               # RunConfig fields shared by every run
    epochs = 100
    lr = 0.001

    [loss_params.learndcg]                # keyword arguments of make_loss(name, ...)
    [model_params.context_aware]          # keyword arguments of make_ranker(name, ...)

    [overrides.data.web10k]               # RunConfig fields for one data set / loss / model
    slate_length = 240                    # (applied in that order, later wins)

Every run goes through the same entry point as a single run: a ``python -m ltr train`` process
(so a crash or a kill affects one run only, and the run store records it the same way). Runs
already completed in the store are skipped; ``workers`` processes run at once, each pinned to a
device slot (CPU threads are split between CPU workers).
"""
from __future__ import annotations

import itertools
import os
import queue
import subprocess
import sys
import threading
import tomllib
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from core.paths import PROJECT_ROOT
from ltr.store import RunStore
from ltr.train import RunConfig, RunInputError

GRID_KEYS = {"name", "data", "folds", "losses", "models", "seeds", "train", "loss_params", "model_params",
             "overrides"}


class GridError(ValueError):
    """A grid file or grid flags that cannot be expanded (one line naming the file and problem)."""


@dataclass
class Grid:
    name: str
    configs: list[RunConfig]
    source: dict = field(default_factory=dict)  # the parsed mapping (recorded with the experiment)


def read_grid_file(path: str | Path) -> dict:
    """Parse a ``.toml`` or ``.yaml``/``.yml`` grid file into a mapping."""
    path = Path(path)
    if not path.is_file():
        raise GridError(f"{path}: grid file not found")
    try:
        if path.suffix == ".toml":
            with open(path, "rb") as fh:
                return tomllib.load(fh)
        if path.suffix in (".yaml", ".yml"):
            import yaml

            loaded = yaml.safe_load(path.read_text())
            if not isinstance(loaded, dict):
                raise GridError(f"{path}: a grid file must be a mapping at the top level")
            return loaded
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        if isinstance(exc, GridError):
            raise
        raise GridError(f"{path}: {' '.join(str(exc).split())}") from None
    except Exception as exc:  # yaml.YAMLError has no common base we can name without importing yaml
        raise GridError(f"{path}: {' '.join(str(exc).split())}") from None
    raise GridError(f"{path}: unknown grid file type (use .toml, .yaml or .yml)")


def expand_grid(spec: Mapping[str, Any], *, source: str = "grid") -> Grid:
    """All run configs of a grid mapping (see the module docstring), validated but not loaded."""
    unknown = sorted(set(spec) - GRID_KEYS)
    if unknown:
        raise GridError(f"{source}: unknown key(s) {unknown}; expected some of {sorted(GRID_KEYS)}")
    lists = {}
    for key in ("data", "folds", "losses", "models"):
        value = spec.get(key)
        if value in (None, [], ""):
            raise GridError(f"{source}: '{key}' is missing or empty")
        lists[key] = list(value) if isinstance(value, (list, tuple)) else [value]
    lists["seeds"] = list(spec.get("seeds", [0])) if isinstance(spec.get("seeds", [0]), (list, tuple)) \
        else [spec["seeds"]]
    train = dict(spec.get("train", {}))
    loss_params, model_params = spec.get("loss_params", {}), spec.get("model_params", {})
    overrides = spec.get("overrides", {})
    bad = sorted(set(overrides) - {"data", "loss", "model"})
    if bad:
        raise GridError(f"{source}: overrides may be per 'data', 'loss' or 'model', not {bad}")
    name = str(spec.get("name") or Path(source).stem)
    configs = []
    for data, fold, loss, model, seed in itertools.product(lists["data"], lists["folds"], lists["losses"],
                                                           lists["models"], lists["seeds"]):
        values = {**train, "data": data, "fold": fold, "loss": loss, "model": model, "seed": seed,
                  "loss_params": dict(loss_params.get(loss, {})), "model_params": dict(model_params.get(model, {})),
                  "experiment": name}
        for kind, key in (("data", data), ("loss", loss), ("model", model)):
            values.update(overrides.get(kind, {}).get(str(key), {}))
        try:
            configs.append(RunConfig.from_dict(values))
        except (RunInputError, TypeError, ValueError) as exc:
            raise GridError(f"{source}: {' '.join(str(exc).split())}") from None
    return Grid(name, configs, dict(spec))


def validate_grid(grid: Grid) -> None:
    """Names and data sets checked up front, so a typo fails the grid before any run starts."""
    from ltr.data.datasets import DatasetError, resolve_dataset
    from ltr.losses import LOSS_NAMES
    from ltr.rankers import RANKER_NAMES

    for cfg in grid.configs:
        if cfg.loss not in LOSS_NAMES:
            raise GridError(f"unknown loss {cfg.loss!r}; choose from {', '.join(LOSS_NAMES)}")
        if cfg.model not in RANKER_NAMES:
            raise GridError(f"unknown model {cfg.model!r}; choose from {', '.join(RANKER_NAMES)}")
    for data in sorted({cfg.data for cfg in grid.configs}):
        try:
            spec, _ = resolve_dataset(data)
        except DatasetError as exc:
            raise GridError(' '.join(str(exc).split())) from None
        folds = sorted({cfg.fold for cfg in grid.configs if cfg.data == data})
        if folds[0] < 1 or folds[-1] > spec.n_folds:
            raise GridError(f"{data}: folds {folds} outside 1..{spec.n_folds}")


def split_done(grid: Grid, store: RunStore) -> tuple[list[RunConfig], list[RunConfig]]:
    """``(to run, already completed)``; a duplicate config in the grid is run once."""
    todo, done, seen = [], [], set()
    completed = set(store.list_runs(status="completed", run_ids=[c.run_id for c in grid.configs])["run_id"])
    for cfg in grid.configs:
        if cfg.run_id in seen:
            continue
        seen.add(cfg.run_id)
        (done if cfg.run_id in completed else todo).append(cfg)
    return todo, done


def default_devices() -> list[str]:
    import torch

    if torch.cuda.is_available():
        return [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    return ["cpu"]


@dataclass
class GridOutcome:
    completed: list[str] = field(default_factory=list)
    failed: dict = field(default_factory=dict)  # run id -> last stderr line
    skipped: list[str] = field(default_factory=list)


def run_grid(grid: Grid, store_path: str | Path, *, workers: int = 1, devices: Sequence[str] | None = None,
             progress: bool = True, force: bool = False, python: str = sys.executable) -> GridOutcome:
    """Run every not-yet-completed config of ``grid``, ``workers`` at a time; returns the outcome.

    Each worker slot owns a device (round-robin over ``devices``); CPU workers share the cores
    evenly through ``OMP_NUM_THREADS``. Each run's output goes to ``<store folder>/logs/<run_id>.log``.
    """
    from tqdm import tqdm

    store_path = Path(store_path)
    with RunStore(store_path) as store:
        store.register_experiment(grid.name, grid.source)
        todo, done = split_done(grid, store) if not force else (list({c.run_id: c for c in grid.configs}.values()), [])
    outcome = GridOutcome(skipped=[c.run_id for c in done])
    if not todo:
        return outcome
    devices = list(devices or default_devices())
    workers = max(1, min(workers, len(todo)))
    slots: queue.Queue[str] = queue.Queue()
    for i in range(workers):
        slots.put(devices[i % len(devices)])
    cpu_workers = sum(1 for i in range(workers) if devices[i % len(devices)] == "cpu")
    threads = max(1, (os.cpu_count() or 1) // max(cpu_workers, 1))
    log_dir = store_path.parent / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    children: set[subprocess.Popen] = set()
    lock = threading.Lock()

    def launch(cfg: RunConfig) -> tuple[str, int, str]:
        device = slots.get()
        try:
            cmd = [python, "-m", "ltr", "train", *cfg.to_cli_args(), "--device", device, "--store", str(store_path)]
            if force:
                cmd.append("--force")
            env = dict(os.environ)
            if device == "cpu" and workers > 1:
                env["OMP_NUM_THREADS"] = str(threads)
            log = log_dir / f"{cfg.run_id}.log"
            with open(log, "w") as fh:
                proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, stdout=fh, stderr=subprocess.STDOUT, env=env)
                with lock:
                    children.add(proc)
                code = proc.wait()
                with lock:
                    children.discard(proc)
            tail = log.read_text().strip().splitlines()
            return cfg.run_id, code, tail[-1] if tail else ""
        finally:
            slots.put(device)

    bar = tqdm(total=len(todo), desc=grid.name, unit="run", disable=not progress)
    pool = ThreadPoolExecutor(max_workers=workers)
    futures = []
    try:
        futures = [pool.submit(launch, cfg) for cfg in todo]
        for fut in as_completed(futures):
            run_id, code, last = fut.result()
            if code == 0:
                outcome.completed.append(run_id)
            else:
                outcome.failed[run_id] = f"exit {code}: {last}"
            bar.set_postfix(failed=len(outcome.failed))
            bar.update()
    except BaseException:
        for fut in futures:
            fut.cancel()
        with lock:
            for proc in children:  # SIGTERM: each trainer marks its run cancelled (resumable)
                proc.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    return outcome
