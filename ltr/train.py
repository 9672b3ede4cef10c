"""Training runs: one ranker trained jointly with its loss on one fold, recorded in the run store.

A run is ``(data, fold, loss, model, hyper-parameters, seed)`` (:class:`RunConfig`); its id is a
hash of exactly the fields that define the result, so re-running a finished configuration is a
no-op and a grid can skip what is done. :func:`train_run` does, in order:

1. **Validate everything before writing anything**: names, data set and fold files (parsed through
   the cached reader), feature counts, loss/ranker parameters, and that a stored run with the same
   id has the same configuration. Bad input raises :class:`RunInputError` (one line); the store is
   untouched.
2. **Train** with Adam (ranker at ``lr``, learnable loss parameters at ``loss_lr``), the whole fold
   on the device as padded tensors (:class:`ltr.data.batching.ListBatcher`); the step does no
   per-query Python work and no host sync: logged values (training loss, LearnDCG's θ/b/α and the
   θ gradients) go into a preallocated on-device buffer flushed to the store at epoch end, when it
   is full, or every ``FLUSH_SECONDS`` (which also serves as the heartbeat).
3. **Per epoch**: validation NDCG@{1,3,5,10}, epoch wall time and mean training loss; model selection
   keeps the epoch with the best validation NDCG@10 (strictly better to replace); early stopping
   after ``patience`` epochs without improvement (0 = never stop early). Then an atomic checkpoint
   (``<store folder>/checkpoints/<run_id>.pt``: model, loss, optimizer, RNG states, counters, best
   state) so a run killed at any moment (SIGKILL included) resumes from the last finished epoch
   and ends with the same result as an uninterrupted one (the batch order is a function of the seed
   and the epoch, and every RNG state is restored).
4. **Test** the selected model on the fold's test split: NDCG@{1,3,5,10} mean and per query.

A crash marks the run ``failed`` with its error, SIGTERM/Ctrl-C mark it ``cancelled``; a SIGKILLed
run is left ``running`` with a stale heartbeat until :meth:`RunStore.reap_stale_runs` or a resume.

Names recorded in the store (what the dashboard reads):

- step metrics (every ``log_every`` steps): ``loss``; for learnable losses the keys of
  ``loss.tracked_parameters()`` (LearnDCG: ``theta_g, theta_d, theta_alpha, b_g, b_d, alpha``) and
  ``grad_<name>`` for each key of ``loss.theta_gradients()``;
- epoch metrics: validation ``ndcg@1, ndcg@3, ndcg@5, ndcg@10``, ``seconds`` (epoch wall time,
  training + validation), ``train_loss`` (mean over the epoch's batches);
- per query (test): ``ndcg@1, ndcg@3, ndcg@5, ndcg@10``; ``train_seconds`` = sum of epoch times
  (over all sessions of a resumed run), ``pretrain_seconds`` = NeuralLoss's surrogate pre-training.

The stored config is the result-defining fields plus a ``data_signature`` (feature and query/document
counts of the three splits): a run id whose stored config differs (e.g. the data folder changed
under it) is refused rather than silently mixed.
"""
from __future__ import annotations

import hashlib
import json
import math
import pickle
import re
import signal
import threading
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import torch

from core.atomic import atomic_write
from ltr.metrics import ndcg_table
from ltr.store import RunBusy, RunConfigMismatch, RunStore, canonical_data, run_is_live

TEST_KS = (1, 3, 5, 10)
SELECTION_METRIC = "ndcg@10"
# Flush buffered step metrics (and so beat the heartbeat) at least this often while training.
FLUSH_SECONDS = 10.0
# Rows of the on-device step buffer; a full buffer is flushed to the store.
STEP_BUFFER_ROWS = 512
EVAL_BATCH_SIZE = 128
CHECKPOINT_FORMAT = 1


class RunInputError(ValueError):
    """Bad input for a run (unknown name, bad data, config clash): reported as one line, nothing stored."""


class RunCancelled(BaseException):
    """Raised in the training thread by SIGTERM (a BaseException so no ``except Exception`` eats it)."""


# --------------------------------------------------------------------------- configuration
@dataclass
class RunConfig:
    """One training run. Fields after ``model_params`` do not change the result (not in the id)."""

    data: str
    fold: int
    loss: str
    model: str
    epochs: int = 50
    lr: float = 1e-3
    loss_lr: float | None = None  # None: the ranker's lr
    batch_size: int = 64
    slate_length: int | None = None  # None: whole lists in training too
    patience: int = 10  # epochs without validation improvement before stopping; 0 = never
    seed: int = 0
    loss_params: dict = field(default_factory=dict)
    model_params: dict = field(default_factory=dict)
    # --- not result-defining
    log_every: int = 1
    flush_every: int = STEP_BUFFER_ROWS  # logged steps buffered on the device between store writes
    device: str | None = None  # None: cuda when available, else cpu
    experiment: str | None = None

    RESULT_FIELDS = ("data", "fold", "loss", "model", "epochs", "lr", "loss_lr", "batch_size",
                     "slate_length", "patience", "seed", "loss_params", "model_params")

    def __post_init__(self):
        self.data = canonical_data(str(self.data))
        self.loss, self.model = str(self.loss).lower(), str(self.model).lower()
        # A loss that computes exactly what another does (learndcg_fixed at its defaults is
        # approxndcg) is stored, and so trained, once under that other name.
        from ltr.losses import canonical_loss

        self.loss, self.loss_params = canonical_loss(self.loss, self.loss_params)
        for name in ("fold", "epochs", "batch_size", "patience", "seed", "log_every", "flush_every"):
            setattr(self, name, int(getattr(self, name)))
        self.lr = float(self.lr)
        self.loss_lr = None if self.loss_lr is None else float(self.loss_lr)
        self.slate_length = None if self.slate_length in (None, 0) else int(self.slate_length)
        self.loss_params, self.model_params = dict(self.loss_params), dict(self.model_params)
        problems = [f"{n} must be >= 1" for n in ("epochs", "batch_size", "log_every", "flush_every") if getattr(self, n) < 1]
        problems += [f"{n} must be > 0" for n in ("lr", "loss_lr") if getattr(self, n) is not None
                     and not getattr(self, n) > 0]
        if self.patience < 0:
            problems.append("patience must be >= 0")
        if self.slate_length is not None and self.slate_length < 1:
            problems.append("slate_length must be >= 1")
        if problems:
            raise RunInputError("invalid run config: " + "; ".join(problems))

    @property
    def effective_loss_lr(self) -> float:
        return self.lr if self.loss_lr is None else self.loss_lr

    def result_config(self) -> dict:
        """The fields that define the result (``loss_lr`` resolved), as stored and hashed."""
        out = {name: getattr(self, name) for name in self.RESULT_FIELDS}
        out["loss_lr"] = self.effective_loss_lr
        return out

    @property
    def run_id(self) -> str:
        """``<data>-f<fold>-<loss>-<model>-<hash>``: readable, and the hash makes it unique/stable."""
        digest = hashlib.sha256(json.dumps(self.result_config(), sort_keys=True).encode()).hexdigest()[:12]
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(self.data).name or "data")
        return f"{slug}-f{self.fold}-{self.loss}-{self.model}-{digest}"

    def to_cli_args(self) -> list[str]:
        """Arguments of ``python -m ltr train`` that reproduce this config exactly."""
        args = ["--data", self.data, "--fold", str(self.fold), "--loss", self.loss, "--model", self.model,
                "--epochs", str(self.epochs), "--lr", repr(self.lr), "--batch-size", str(self.batch_size),
                "--patience", str(self.patience), "--seed", str(self.seed), "--log-every", str(self.log_every)]
        if self.flush_every != STEP_BUFFER_ROWS:
            args += ["--flush-every", str(self.flush_every)]
        if self.loss_lr is not None:
            args += ["--loss-lr", repr(self.loss_lr)]
        if self.slate_length is not None:
            args += ["--slate-length", str(self.slate_length)]
        if self.device is not None:
            args += ["--device", self.device]
        if self.experiment is not None:
            args += ["--experiment", self.experiment]
        for flag, params in (("--loss-param", self.loss_params), ("--model-param", self.model_params)):
            for key, value in sorted(params.items()):
                args += [flag, f"{key}={json.dumps(value)}"]
        return args

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "RunConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise RunInputError(f"unknown run config field(s) {unknown}; known: {sorted(known)}")
        return cls(**dict(values))


def resolve_device(device: str | None) -> torch.device:
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise RunInputError(f"invalid device {device!r}: {exc}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RunInputError(f"device {device!r} requested but CUDA is not available")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        # Otherwise the first .to(dev) fails deep inside torch with "invalid device ordinal".
        raise RunInputError(f"device {device!r} does not exist: {torch.cuda.device_count()} CUDA device(s) "
                            f"visible (cuda:0..cuda:{torch.cuda.device_count() - 1})")
    return dev


def checkpoint_path(store: RunStore, run_id: str) -> Path:
    """``<store folder>/checkpoints/<run_id>.pt`` (``cache/checkpoints/`` for the default store)."""
    return store.path.parent / "checkpoints" / f"{run_id}.pt"


# --------------------------------------------------------------------------- preparation (no writes)
@dataclass
class PreparedRun:
    config: RunConfig
    device: torch.device
    splits: dict  # split name -> RankingDataset
    model: torch.nn.Module
    loss_fn: torch.nn.Module
    pretrain_seconds: float | None
    stored_config: dict  # what the store records (result config + data signature)


def prepare_run(config: RunConfig) -> PreparedRun:
    """Validate names, load and check the fold, build ranker and loss; raises :class:`RunInputError`."""
    from ltr.data.datasets import DatasetError, load_fold, resolve_dataset
    from ltr.data.letor import LetorFormatError
    from ltr.losses import LOSS_NAMES, make_loss
    from ltr.rankers import RANKER_NAMES, make_ranker

    if config.loss not in LOSS_NAMES:
        raise RunInputError(f"unknown loss {config.loss!r}; choose from {', '.join(LOSS_NAMES)}")
    if config.model not in RANKER_NAMES:
        raise RunInputError(f"unknown model {config.model!r}; choose from {', '.join(RANKER_NAMES)}")
    device = resolve_device(config.device)
    try:
        spec, _folder = resolve_dataset(config.data)
        if not 1 <= config.fold <= spec.n_folds:
            raise RunInputError(f"{config.data}: fold {config.fold} does not exist (folds 1..{spec.n_folds})")
        splits = {split: load_fold(config.data, config.fold, split) for split in ("train", "vali", "test")}
    except (DatasetError, LetorFormatError, FileNotFoundError) as exc:
        raise RunInputError(_one_line(exc)) from None
    for split, ds in splits.items():
        if spec.n_features and ds.n_features != spec.n_features:
            raise RunInputError(f"{config.data} fold {config.fold} {split}: {ds.n_features} features, "
                                f"but {spec.name} has {spec.n_features}")
        if ds.n_queries == 0:
            raise RunInputError(f"{config.data} fold {config.fold} {split}: no queries")
    n_features = splits["train"].n_features
    # The loss first: NeuralLoss may pre-train (consuming RNG) only when its cache is cold, and the
    # run's seed must not depend on that.
    try:
        loss_fn = make_loss(config.loss, **_dataset_loss_defaults(config, spec, splits["train"]))
    except TypeError as exc:  # make_loss already names the loss
        raise RunInputError(_one_line(exc)) from None
    except ValueError as exc:
        raise RunInputError(f"bad parameters for loss {config.loss!r}: {_one_line(exc)}") from None
    torch.manual_seed(config.seed)
    try:
        model = make_ranker(config.model, n_features, **config.model_params)
    except (TypeError, ValueError) as exc:
        raise RunInputError(f"bad parameters for model {config.model!r}: {_one_line(exc)}") from None
    pretrain = getattr(loss_fn, "pretrain_seconds", None)
    stored = config.result_config()
    stored["data_signature"] = {"n_features": n_features,
                                **{f"{s}_queries": ds.n_queries for s, ds in splits.items()},
                                **{f"{s}_documents": int(ds.labels.shape[0]) for s, ds in splits.items()}}
    stored = json.loads(json.dumps(stored, sort_keys=True))  # as the store gives it back (tuples -> lists)
    return PreparedRun(config, device, splits, model.to(device), loss_fn.to(device),
                       None if pretrain is None else float(pretrain), stored)


def _dataset_loss_defaults(config: RunConfig, spec, train) -> dict:
    """The loss parameters with dataset-dependent defaults filled in.

    RMSE regresses labels onto ``n_levels * sigmoid(s)``, so its scale must be the number of grades
    of the dataset (3 for MQ2007/2008, 5 for WEB10K/Yahoo), not a fixed 5. NeuralLoss's surrogate is
    pre-trained for the data set's grade range (``max_grade`` of its spec) and list-length range (the
    training lists, capped by the slate length); explicit loss parameters win.
    """
    params = dict(config.loss_params)
    max_grade = spec.max_grade if spec.max_grade is not None else int(train.labels.max(initial=0))
    if config.loss == "rmse" and "n_levels" not in params:
        params["n_levels"] = int(max_grade) + 1
    if config.loss == "neuralloss":
        # NeuralLoss's surrogate is pre-trained (and cached) for this data set's grades and list lengths
        lengths = train.list_lengths()
        longest = int(lengths.max()) if config.slate_length is None else min(int(lengths.max()), config.slate_length)
        params.setdefault("max_grade", max(int(max_grade), 1))
        params.setdefault("max_length", max(longest, 2))
        params.setdefault("min_length", min(max(int(lengths.min()), 1), params["max_length"]))
    return params


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# --------------------------------------------------------------------------- step logging
class StepLog:
    """Per-step values buffered on the device (no host sync in the step), flushed in one copy.

    Columns: ``loss``, the loss's tracked parameters (LearnDCG: θ_g, θ_d, θ_α, b_g, b_d, α) and
    ``grad_<θ>`` for each learnable θ. Tensor-valued attributes of the loss are read directly; a
    parameter only available as a float costs a sync at logged steps.
    """

    def __init__(self, loss_fn: torch.nn.Module, device: torch.device, rows: int = STEP_BUFFER_ROWS):
        self.loss_fn = loss_fn
        self.param_names = list(_call_dict(loss_fn, "tracked_parameters"))
        self.theta_names = list(_call_dict(loss_fn, "theta_gradients"))
        self.names = ["loss"] + self.param_names + [f"grad_{n}" for n in self.theta_names]
        self.buffer = torch.full((rows, len(self.names)), float("nan"), device=device)
        self.meta: list[tuple[int, int]] = []  # (step, epoch) of each filled row

    @property
    def full(self) -> bool:
        return len(self.meta) >= self.buffer.shape[0]

    def record(self, step: int, epoch: int, loss_value: torch.Tensor) -> None:
        row = len(self.meta)
        if row >= self.buffer.shape[0]:
            raise RuntimeError("StepLog is full: drain() it (train_epoch's on_flush does)")
        self.buffer[row, 0] = loss_value.detach()
        if len(self.names) > 1:
            values = [self._param(n) for n in self.param_names] + [self._grad(n) for n in self.theta_names]
            self.buffer[row, 1:] = torch.stack([torch.as_tensor(v, dtype=self.buffer.dtype,
                                                                 device=self.buffer.device) for v in values])
        self.meta.append((step, epoch))

    def _param(self, name: str):
        value = getattr(self.loss_fn, name, None)
        if isinstance(value, torch.Tensor):
            return value.detach().reshape(())
        return _call_dict(self.loss_fn, "tracked_parameters")[name]

    def _grad(self, name: str):
        value = getattr(self.loss_fn, name, None)
        if isinstance(value, torch.Tensor) and value.grad is not None:
            return value.grad.detach().reshape(())
        grads = _call_dict(self.loss_fn, "theta_gradients")
        return grads.get(name, grads.get(f"grad_{name}", float("nan")))

    def drain(self) -> list[tuple[int, int, dict[str, float]]]:
        """The buffered rows as ``(step, epoch, {name: value})`` (one device->host copy); resets."""
        if not self.meta:
            return []
        values = self.buffer[: len(self.meta)].cpu().tolist()
        rows = [(step, epoch, dict(zip(self.names, vals))) for (step, epoch), vals in zip(self.meta, values)]
        self.meta = []
        bad = next((r for r in rows if not math.isfinite(r[2]["loss"])), None)
        if bad is not None:
            raise FloatingPointError(f"training loss became {bad[2]['loss']} at step {bad[0]} (epoch {bad[1]})")
        return rows


def _call_dict(module, method: str) -> dict:
    fn = getattr(module, method, None)
    return dict(fn()) if callable(fn) else {}


# --------------------------------------------------------------------------- training pieces
def build_optimizer(model: torch.nn.Module, loss_fn: torch.nn.Module, lr: float, loss_lr: float) -> torch.optim.Adam:
    """Adam over the ranker (``lr``) and the loss's learnable parameters (``loss_lr``), one group each."""
    groups = [{"params": [p for p in model.parameters() if p.requires_grad], "lr": lr}]
    loss_params = [p for p in loss_fn.parameters() if p.requires_grad]
    if loss_params:
        groups.append({"params": loss_params, "lr": loss_lr})
    return torch.optim.Adam(groups)


def train_epoch(model, loss_fn, optimizer, batcher, epoch: int, step: int, *, log_every: int = 1,
                step_log: StepLog | None = None, on_flush: Callable[[], None] | None = None) -> tuple[int, torch.Tensor]:
    """One pass over the training batches; returns ``(next step, mean training loss as a 0-d tensor)``.

    ``on_flush`` is called when the step buffer is full or ``FLUSH_SECONDS`` passed since the last
    call (it drains ``step_log`` to the store and so beats the heartbeat).
    """
    model.train()
    loss_fn.train()
    batcher.set_epoch(epoch)
    total, n_batches = None, 0
    last_flush = time.monotonic()
    for batch in batcher:
        scores = model(batch.features, batch.mask)
        value = loss_fn(scores, batch.labels)
        optimizer.zero_grad(set_to_none=True)
        if hasattr(loss_fn, "hypergradient_backward"):  # learndcg_meta: θ learns from validation NDCG
            loss_fn.hypergradient_backward(model, scores, batch.labels, step=step, lr=optimizer.param_groups[0]["lr"])
        else:
            value.backward()
        # Logged after backward (θ gradients of this step) and before the update (θ used in it).
        if step_log is not None and step % log_every == 0:
            step_log.record(step, epoch, value)
        optimizer.step()
        total = value.detach() if total is None else total + value.detach()
        n_batches += 1
        step += 1
        if on_flush is not None and ((step_log is not None and step_log.full)
                                     or time.monotonic() - last_flush > FLUSH_SECONDS):
            on_flush()
            last_flush = time.monotonic()
    if total is None:
        raise RunInputError("the training split produced no batch")
    return step, total / n_batches


@torch.no_grad()
def evaluate(model, batcher, n_queries: int, ks=TEST_KS, tick: Callable[[], None] | None = None) -> torch.Tensor:
    """NDCG@k of every query, ``[len(ks), Q]`` in the split's query order (no document dropped)."""
    model.eval()
    out = None
    for batch in batcher:
        scores = model(batch.features, batch.mask)
        table = ndcg_table(scores, batch.labels, ks)
        if out is None:
            out = torch.full((len(ks), n_queries), float("nan"), dtype=torch.float64, device=scores.device)
        out[:, batch.query_index] = torch.stack([table[k].to(torch.float64) for k in ks])
        if tick is not None:
            tick()
    return out


def make_batcher(ds, device, batch_size, *, slate_length=None, shuffle=False, seed=0):
    from ltr.data.batching import ListBatcher

    return ListBatcher(ds, device, batch_size, slate_length=slate_length, shuffle=shuffle, seed=seed)


# --------------------------------------------------------------------------- checkpoints
def _rng_state() -> dict:
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: Mapping) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(path: Path, state: dict) -> None:
    """Write atomically (temp file + ``os.replace``): a kill mid-write leaves the previous one intact."""
    atomic_write(path, lambda tmp: torch.save(state, tmp))


def load_checkpoint(path: Path, run_id: str) -> dict | None:
    """The checkpoint of ``run_id`` (tensors and plain containers only: ``weights_only=True``)."""
    if not path.is_file():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError) as exc:
        # Unreadable (e.g. written by another torch version): starting over is always correct.
        warnings.warn(f"ignoring unreadable checkpoint {path}: {_one_line(exc)}", stacklevel=2)
        return None
    if state.get("format") != CHECKPOINT_FORMAT or state.get("run_id") != run_id:
        return None
    return state


def _clone_state(module: torch.nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


# --------------------------------------------------------------------------- the run
@dataclass
class RunResult:
    run_id: str
    status: str
    retrained: bool  # False when the stored result of a completed run was returned
    summary: dict  # :func:`run_summary` of the run (the ``--out`` JSON)


def train_run(config: RunConfig, store: RunStore, resume: bool = True, *, force: bool = False,
              prepared: PreparedRun | None = None, progress: Callable[[str], None] | None = None) -> RunResult:
    """Train (or resume, or just look up) the run of ``config``; see the module docstring.

    ``resume=False`` discards a checkpoint and starts over; ``force=True`` also retrains a run
    that completed (and replaces a stored run whose configuration no longer matches).
    """
    run_id = config.run_id
    prepared = prepared or prepare_run(config)
    existing = store.find_run(run_id)
    if existing is not None:
        if run_is_live(existing):
            raise RunInputError(f"run {run_id} is being trained right now by pid {existing['pid']} "
                                f"on {existing['host']}")
        if existing["config"] != prepared.stored_config and not force:
            raise RunInputError(f"run {run_id} is stored with a different configuration or data "
                                f"(stored {json.dumps(existing['config'], sort_keys=True)}); "
                                f"use --force to replace it")
        if force:
            store.delete_run(run_id)
            checkpoint_path(store, run_id).unlink(missing_ok=True)
            existing = None
        elif existing["status"] == "completed":
            return RunResult(run_id, "completed", False, run_summary(store, run_id))
    try:
        store.register_run(run_id, prepared.stored_config, experiment=config.experiment,
                           total_epochs=config.epochs)
    except RunConfigMismatch as exc:  # a concurrent writer registered it differently meanwhile
        raise RunInputError(_one_line(exc)) from None
    ckpt_path = checkpoint_path(store, run_id)
    if existing is None or not resume:
        ckpt_path.unlink(missing_ok=True)  # a leftover from a deleted store must not be resumed
    try:
        with _sigterm_cancels():
            try:
                store.start_run(run_id, device=str(prepared.device))
            except RunBusy as exc:
                raise RunInputError(_one_line(exc)) from None
            _train(prepared, store, ckpt_path, progress or (lambda _msg: None))
    except RunInputError:
        raise
    except (RunCancelled, KeyboardInterrupt) as exc:
        store.fail_run(run_id, f"cancelled ({type(exc).__name__}); resume to continue", status="cancelled")
        raise
    except BaseException as exc:
        tb = traceback.format_exception(exc)
        store.fail_run(run_id, f"{type(exc).__name__}: {_one_line(exc)}\n{''.join(tb[-6:])}")
        raise
    return RunResult(run_id, "completed", True, run_summary(store, run_id))


@contextmanager
def _sigterm_cancels() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise RunCancelled(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _train(p: PreparedRun, store: RunStore, ckpt_path: Path, progress: Callable[[str], None]) -> None:
    cfg, device, run_id = p.config, p.device, p.config.run_id
    model, loss_fn = p.model, p.loss_fn
    optimizer = build_optimizer(model, loss_fn, cfg.lr, cfg.effective_loss_lr)
    train_b = make_batcher(p.splits["train"], device, cfg.batch_size, slate_length=cfg.slate_length,
                           shuffle=True, seed=cfg.seed)
    eval_bs = max(cfg.batch_size, EVAL_BATCH_SIZE)
    vali_b = make_batcher(p.splits["vali"], device, eval_bs)
    step_log = StepLog(loss_fn, device, rows=cfg.flush_every)
    if hasattr(loss_fn, "attach_validation"):  # learndcg_meta's outside criterion: training-sized vali batches
        loss_fn.attach_validation(list(make_batcher(p.splits["vali"], device, cfg.batch_size)))

    state = {"epoch": 0, "step": 0, "best_metric": -math.inf, "best_epoch": -1, "bad_epochs": 0,
             "stopped": False, "train_seconds": 0.0}
    best_model, best_loss = _clone_state(model), _clone_state(loss_fn)
    ckpt = load_checkpoint(ckpt_path, run_id)
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
        loss_fn.load_state_dict(ckpt["loss"])
        optimizer.load_state_dict(ckpt["optimizer"])
        best_model, best_loss = ckpt["best_model"], ckpt["best_loss"]
        state.update(ckpt["counters"])
        _set_rng_state(ckpt["rng"])
        progress(f"resuming {run_id} after epoch {state['epoch'] - 1} (step {state['step']})")
    store.truncate_after(run_id, step=state["step"], epoch=state["epoch"])

    last_beat = [time.monotonic()]

    def flush() -> None:
        rows = step_log.drain()
        if rows:
            store.log_steps(run_id, rows)  # also beats the heartbeat
        else:
            store.heartbeat(run_id)
        last_beat[0] = time.monotonic()

    def tick() -> None:
        if time.monotonic() - last_beat[0] > FLUSH_SECONDS:
            flush()

    while not state["stopped"] and state["epoch"] < cfg.epochs:
        epoch, started = state["epoch"], time.perf_counter()
        step, mean_loss = train_epoch(model, loss_fn, optimizer, train_b, epoch, state["step"],
                                      log_every=cfg.log_every, step_log=step_log, on_flush=flush)
        flush()
        vali = evaluate(model, vali_b, p.splits["vali"].n_queries, TEST_KS, tick).mean(dim=1).tolist()
        seconds = time.perf_counter() - started
        metrics = {f"ndcg@{k}": v for k, v in zip(TEST_KS, vali)}
        selected = metrics[SELECTION_METRIC]
        if selected > state["best_metric"]:
            state.update(best_metric=selected, best_epoch=epoch, bad_epochs=0)
            best_model, best_loss = _clone_state(model), _clone_state(loss_fn)
        else:
            state["bad_epochs"] += 1
        state.update(epoch=epoch + 1, step=step, train_seconds=state["train_seconds"] + seconds,
                     stopped=bool(cfg.patience) and state["bad_epochs"] >= cfg.patience)
        # Store first, checkpoint second: a checkpoint always has its epoch in the store.
        store.log_epoch(run_id, epoch, {**metrics, "seconds": seconds, "train_loss": float(mean_loss)})
        save_checkpoint(ckpt_path, {
            "format": CHECKPOINT_FORMAT, "run_id": run_id, "model": model.state_dict(),
            "loss": loss_fn.state_dict(), "optimizer": optimizer.state_dict(), "best_model": best_model,
            "best_loss": best_loss, "counters": dict(state), "rng": _rng_state()})
        progress(f"epoch {epoch}: vali ndcg@10 {selected:.4f} (best {state['best_metric']:.4f} at "
                 f"{state['best_epoch']}) loss {float(mean_loss):.4f} {seconds:.1f}s")

    model.load_state_dict(best_model)
    test_ds = p.splits["test"]
    per_query = evaluate(model, make_batcher(test_ds, device, eval_bs), test_ds.n_queries, TEST_KS, tick).cpu()
    means = {f"ndcg@{k}": float(per_query[i].mean()) for i, k in enumerate(TEST_KS)}
    per_query_map = {f"ndcg@{k}": dict(zip(test_ds.qids, per_query[i].tolist())) for i, k in enumerate(TEST_KS)}
    store.finish_run(run_id, test_means=means, per_query=per_query_map, train_seconds=state["train_seconds"],
                     pretrain_seconds=p.pretrain_seconds, best_epoch=state["best_epoch"])
    ckpt_path.unlink(missing_ok=True)
    progress("test " + " ".join(f"{k} {v:.4f}" for k, v in means.items()))


# --------------------------------------------------------------------------- results
def run_summary(store: RunStore, run_id: str) -> dict:
    """A run as the ``--out`` JSON: config, validation per epoch, loss-parameter trajectory, test.

    Keys: ``run_id``, ``status``, ``config`` (result-defining fields + data signature), ``device``,
    ``best_epoch``, ``epochs_done``, ``validation`` ``[{epoch, ndcg@1..@10, seconds, train_loss}]``,
    ``loss_parameters`` ``[{step, epoch, theta_g, ..., grad_theta_d, ...}]`` (empty for fixed
    losses), ``train_loss`` ``[{step, epoch, loss}]``, ``test`` ``{ndcg@k: mean}``,
    ``test_per_query_ndcg@10`` ``{qid: value}``, ``test_per_query`` ``{ndcg@k: {qid: value}}``,
    ``train_seconds``, ``pretrain_seconds``, ``error``.
    """
    run = store.get_run(run_id)
    epochs = store.epoch_series([run_id])
    validation = [{"epoch": int(e), **dict(zip(g["name"], g["value"]))} for e, g in epochs.groupby("epoch")]
    names = store.step_metric_names(run_id)
    steps = store.step_series([run_id], names, max_points=10**9)
    trajectory = []
    if not steps.empty:
        wide = steps.pivot(index=["step", "epoch"], columns="name", values="value").reset_index()
        trajectory = [{k: (int(v) if k in ("step", "epoch") else _num(v)) for k, v in row.items()}
                      for row in wide.to_dict("records")]
    per_query = {}
    for k in TEST_KS:
        pq = store.per_query([run_id], f"ndcg@{k}")
        per_query[f"ndcg@{k}"] = {q: _num(v) for q, v in zip(pq["qid"], pq["value"])}
    return {
        "run_id": run_id,
        "status": run["status"],
        "config": run["config"],
        "device": run["device"],
        "best_epoch": run["best_epoch"],
        "epochs_done": run["epochs_done"],
        "validation": validation,
        "loss_parameters": [{k: v for k, v in r.items() if k != "loss"} for r in trajectory] if set(names) - {"loss"}
        else [],
        "train_loss": [{"step": r["step"], "epoch": r["epoch"], "loss": r.get("loss")} for r in trajectory],
        "test": {f"ndcg@{k}": run[f"test_ndcg{k}"] for k in TEST_KS},
        "test_per_query_ndcg@10": per_query["ndcg@10"],
        "test_per_query": per_query,
        "train_seconds": run["train_seconds"],
        "pretrain_seconds": run["pretrain_seconds"],
        "error": run["error"],
    }


def _num(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None
