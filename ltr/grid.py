"""Experiment grids: data sets x folds x losses x rankers x seeds, from a TOML/YAML file or flags.

A grid file (TOML shown; YAML has the same structure)::

    name = "learndcg-study"               # the experiment name recorded with every run
    data = ["mq2007", "mq2008"]           # registry names or folders of FoldK/
    folds = [1, 2, 3, 4, 5]
    losses = ["approxndcg", "learndcg"]
    models = ["mlp"]                      # "lambdamart": one LightGBM run per data, fold and seed (ltr.gbdt)
    seeds = [0]                           # optional, default [0]

    [train]                               # RunConfig fields shared by every run
    epochs = 100
    lr = 0.001

    [loss_params.learndcg]                # keyword arguments of make_loss(name, ...)
    [model_params.context_aware]          # keyword arguments of make_ranker(name, ...)

    [overrides.data.web10k]               # RunConfig fields for one data set / loss / model
    slate_length = 240                    # (applied in that order, later wins)

Runs are trained by ``workers`` trainer hosts (``python -m ltr worker``, :mod:`ltr.train.host`),
each training run after run in one process with the same entry point as the dashboard's job runner
(:func:`ltr.train.inprocess.train_one`), so start-up and data loading are paid once per worker and
fold, not once per run; a crash or a kill still costs one run only. Runs already completed in the
store are skipped; each worker is pinned to a device. CPU workers share the cores: each host is told how
many there are (``IRDASH_WORKERS``) and takes at most its share, fewer when the machine is busy
(:mod:`core.threads`), so ``--workers 2`` never gives each worker every core.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import signal
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from core.jobs.hosts import HostProcess
from core.threads import WORKERS_ENV
from ltr.gbdt import GBDT_MODELS, NEURAL_ONLY_FIELDS, is_gbdt_model
from ltr.store import RunStore
from ltr.train import RunConfig, RunInputError

POLL_SECONDS = 0.05
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
    configs, seen = [], set()
    for data, fold, loss, model, seed in itertools.product(lists["data"], lists["folds"], lists["losses"],
                                                           lists["models"], lists["seeds"]):
        values = {**train, "data": data, "fold": fold, "loss": loss, "model": model, "seed": seed,
                  "loss_params": dict(loss_params.get(loss, {})), "model_params": dict(model_params.get(model, {})),
                  "experiment": name}
        if is_gbdt_model(str(model)):
            # A tree ranker has its own objective, not the grid's losses, and no use for the neural training
            # settings (ltr.gbdt): one run per data set, fold and seed, whatever the losses.
            values.update(loss=GBDT_MODELS[str(model).lower()], loss_params={})
            for name_ in NEURAL_ONLY_FIELDS:
                values.pop(name_, None)
        for kind, key in (("data", data), ("loss", values["loss"]), ("model", model)):
            values.update(overrides.get(kind, {}).get(str(key), {}))
        try:
            config = RunConfig.from_dict(values)
        except (RunInputError, TypeError, ValueError) as exc:
            raise GridError(f"{source}: {' '.join(str(exc).split())}") from None
        if not is_gbdt_model(config.model):
            configs.append(config)
        elif config.run_id not in seen:  # once, not once per loss of the grid
            seen.add(config.run_id)
            configs.append(config)
    return Grid(name, configs, dict(spec))


def validate_grid(grid: Grid) -> None:
    """Names and data sets checked up front, so a typo fails the grid before any run starts."""
    from ltr.data.datasets import DatasetError, resolve_dataset
    from ltr.losses import LOSSES
    from ltr.rankers import RANKERS

    for cfg in grid.configs:
        if is_gbdt_model(cfg.model):
            continue  # its objective is checked by RunConfig (ltr.gbdt.gbdt_config_problems)
        if cfg.loss not in LOSSES.names():
            raise GridError(f"unknown loss {cfg.loss!r}; choose from {', '.join(LOSSES.names())}")
        if cfg.model not in RANKERS.names():
            raise GridError(f"unknown model {cfg.model!r}; choose from {', '.join((*RANKERS.names(), *GBDT_MODELS))}")
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
    failed: dict = field(default_factory=dict)  # run id -> last line of its log
    skipped: list[str] = field(default_factory=list)


@dataclass
class _Slot:
    """One worker: a device, its host process, and the run it is training."""

    device: str
    env: dict
    host: HostProcess | None = None
    config: RunConfig | None = None
    last_fold: tuple | None = None


def _next_config(todo: list[RunConfig], last_fold: tuple | None, held: frozenset[str] = frozenset()) -> RunConfig:
    """The next run for a worker: one of the fold it already holds when there is one (read once). A run of a loss
    in ``held`` (its one-time pre-training may be under way on another worker, which this run would wait for) is
    taken only when nothing else is left."""
    free = [i for i, cfg in enumerate(todo) if cfg.loss not in held] or list(range(len(todo)))
    for i in free:
        if (todo[i].data, todo[i].fold) == last_fold:
            return todo.pop(i)
    return todo.pop(free[0])


def _held_losses(slots, paid: set[str]) -> frozenset[str]:
    """The losses with a one-time pre-training (:data:`ltr.losses.PRETRAINED_ONCE`) that a worker is training
    now and that no run of this grid has finished yet: the first such run pays the pre-training (or loads it),
    and a second worker starting one would only wait on its lock (measured: 353 s of one idle core in the MQ2008
    reproduction's shared part)."""
    from ltr.losses import PRETRAINED_ONCE

    return frozenset(s.config.loss for s in slots
                     if s.config is not None and s.config.loss in PRETRAINED_ONCE and s.config.loss not in paid)


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except FileNotFoundError:
        return ""
    return lines[-1] if lines else ""


def run_grid(grid: Grid, store_path: str | Path, *, workers: int = 1, devices: Sequence[str] | None = None,
             progress: bool = True, force: bool = False, python: str = sys.executable) -> GridOutcome:
    """Run every not-yet-completed config of ``grid`` on ``workers`` trainer hosts; returns the outcome.

    Each worker is a ``python -m ltr worker`` host (:mod:`ltr.train.host`) that trains run after run
    in one process, runs of the fold it already read first (and no second run of a loss whose one-time
    pre-training another worker is paying, :func:`_next_config`); it owns a device (round-robin over
    ``devices``) and CPU workers share the cores (``IRDASH_WORKERS``, :mod:`core.threads`). A run's output goes to
    ``<store folder>/logs/<run_id>.log``. A host that dies (killed, out of memory) loses only the run
    it was training: that run is marked failed and a new host takes the next run.
    """
    from tqdm import tqdm

    from ltr.train.host import host_command

    store_path = Path(store_path)
    with RunStore(store_path) as store:
        store.register_experiment(grid.name, grid.source)
        todo, done = split_done(grid, store) if not force else (list({c.run_id: c for c in grid.configs}.values()), [])
    outcome = GridOutcome(skipped=[c.run_id for c in done])
    if not todo:
        return outcome
    todo = sorted(todo, key=lambda c: (c.data, c.fold))
    devices = list(devices or default_devices())
    workers = max(1, min(workers, len(todo)))
    cpu_workers = sum(1 for i in range(workers) if devices[i % len(devices)] == "cpu")
    log_dir = store_path.parent / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    slots = []
    for i in range(workers):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if devices[i % len(devices)] == "cpu":  # each host's threads: its share of the free cores
            env[WORKERS_ENV] = str(cpu_workers)
        slots.append(_Slot(devices[i % len(devices)], env))
    argv = [python, *host_command()[1:]]
    bar = tqdm(total=len(todo), desc=grid.name, unit="run", disable=not progress)
    paid: set[str] = set()  # losses a run of which has ended here (a one-time pre-training then is cached)
    try:
        while todo or any(s.config is not None for s in slots):
            for slot in slots:
                if slot.config is not None:
                    code = slot.host.exit_code()
                    if code is None and slot.host.alive():
                        continue
                    paid.add(slot.config.loss)  # ended: its pre-training is cached (or failed: not worth waiting for)
                    _record(slot, code, store_path, log_dir, outcome)
                    bar.set_postfix(failed=len(outcome.failed))
                    bar.update()
                if todo:
                    if slot.host is None or not slot.host.alive():
                        slot.host = HostProcess(argv, env=slot.env, log=log_dir / "hosts.log")
                    slot.config = _next_config(todo, slot.last_fold, _held_losses(slots, paid))
                    slot.last_fold = (slot.config.data, slot.config.fold)
                    request = {"config": {**dataclasses.asdict(slot.config), "device": slot.device},
                               "store": str(store_path), "force": force,
                               "log": str(log_dir / f"{slot.config.run_id}.log")}
                    (log_dir / f"{slot.config.run_id}.log").unlink(missing_ok=True)
                    slot.host.send(request, log_dir / f"{slot.config.run_id}.exit")
            time.sleep(POLL_SECONDS)
    except BaseException:
        for slot in slots:  # SIGTERM: each host marks its run cancelled (resumable) and ends
            if slot.host is not None:
                slot.host.signal(signal.SIGTERM)
        raise
    finally:
        for slot in slots:
            if slot.host is not None:
                slot.host.close(wait=60)
        bar.close()
    return outcome


def _record(slot: _Slot, code: int | None, store_path: Path, log_dir: Path, outcome: GridOutcome) -> None:
    """Book the slot's finished run; a host that died without an exit status fails its run."""
    run_id = slot.config.run_id
    log = log_dir / f"{run_id}.log"
    if code == 0:
        outcome.completed.append(run_id)
    elif code is None:
        why = f"the worker process died (exit status {slot.host.proc.returncode}) while training it"
        with RunStore(store_path) as store:
            run = store.find_run(run_id)
            if run is not None and run["status"] == "running":
                store.fail_run(run_id, why + "; resume it to continue")
        if run is not None and run["status"] == "completed":  # stored whole before the host died (no exit file yet)
            outcome.completed.append(run_id)
        else:
            outcome.failed[run_id] = why
    else:
        outcome.failed[run_id] = f"exit {code}: {_last_line(log)}"
    slot.host.exit_path.unlink(missing_ok=True)
    slot.config = None
