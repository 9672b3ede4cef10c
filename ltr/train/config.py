"""A run's configuration: the result-defining fields, the run id, the CLI form and the device."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

import torch

from core.digest import content_digest
from ltr.store import canonical_data
from ltr.train.steplog import STEP_BUFFER_ROWS


class RunInputError(ValueError):
    """Bad input for a run (unknown name, bad data, config clash): reported as one line, nothing stored."""


class RunCancelled(BaseException):
    """Raised in the training thread by SIGTERM or a cancel request (a BaseException so that no
    ``except Exception`` eats it)."""


def one_line(exc: BaseException) -> str:
    """An exception as one line of text (its message with whitespace collapsed, else its type)."""
    return " ".join(str(exc).split()) or type(exc).__name__


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

        self.loss, self.loss_params = canonical_loss(self.loss, dict(self.loss_params))
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
        from ltr.gbdt import gbdt_config_problems  # a tree ranker (lambdamart) takes its own settings

        problems += gbdt_config_problems(self)
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
        digest = content_digest(self.result_config(), 12)
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

