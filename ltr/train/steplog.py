"""Per-step training values (loss, LearnDCG's θ/b/α and θ gradients) buffered on the device."""
from __future__ import annotations

import math

import torch

from ltr.losses._common import RankingLoss

# Rows of the on-device step buffer; a full buffer is flushed to the store.
STEP_BUFFER_ROWS = 512


class StepLog:
    """Per-step values buffered on the device (no host sync in the step), flushed in one copy.

    Columns: ``loss``, the loss's tracked parameters (LearnDCG: θ_g, θ_d, θ_α, b_g, b_d, α) and
    ``grad_<θ>`` for each learnable θ. Only steps that are multiples of ``every`` are recorded
    (:meth:`record` ignores the others, so every caller honours "log every N steps").

    A logged step costs a handful of small device kernels: the loss's ``tracked_tensor()`` (LearnDCG:
    one stack and one softplus for all six values), one stack of the θ gradients, one row copy. A
    loss whose ``tracked_tensor()`` is None has its values read from ``tracked_parameters()`` (host floats), one
    whose ``theta_tensors()`` is empty its gradients from ``theta_gradients()``.
    """

    def __init__(self, loss_fn: RankingLoss, device: torch.device, rows: int = STEP_BUFFER_ROWS,
                 every: int = 1):
        self.loss_fn = loss_fn
        self.every = max(1, int(every))
        self.param_names = list(loss_fn.tracked_parameters())
        self.theta_names = list(loss_fn.theta_gradients())
        self.names = ["loss"] + self.param_names + [f"grad_{n}" for n in self.theta_names]
        self.buffer = torch.full((rows, len(self.names)), float("nan"), device=device)
        self.meta: list[tuple[int, int]] = []  # (step, epoch) of each filled row
        thetas = loss_fn.theta_tensors()
        # θ tensors whose .grad is read directly (None: fall back to theta_gradients())
        self._thetas = [thetas[n] for n in self.theta_names] if all(n in thetas for n in self.theta_names) else None
        self._tracks_tensor = bool(self.param_names) and loss_fn.tracked_tensor() is not None

    @property
    def full(self) -> bool:
        return len(self.meta) >= self.buffer.shape[0]

    def record(self, step: int, epoch: int, loss_value: torch.Tensor) -> None:
        """Buffer step ``step``'s values (after backward, before the optimiser step) when it is logged."""
        if step % self.every:
            return
        row = len(self.meta)
        if row >= self.buffer.shape[0]:
            raise RuntimeError("StepLog is full: drain() it (train_epoch's on_flush does)")
        parts = [loss_value.detach().reshape(1).to(self.buffer.dtype)]
        if self.param_names:
            parts.append(self._params())
        if self.theta_names:
            parts.append(self._grads())
        self.buffer[row] = parts[0] if len(parts) == 1 else torch.cat(parts)
        self.meta.append((step, epoch))

    def _as_row(self, values) -> torch.Tensor:
        return torch.stack([torch.as_tensor(v, dtype=self.buffer.dtype, device=self.buffer.device).reshape(())
                            for v in values])

    def _params(self) -> torch.Tensor:
        if self._tracks_tensor:
            return self.loss_fn.tracked_tensor().to(self.buffer.dtype)
        values = self.loss_fn.tracked_parameters()
        return self._as_row([values[name] for name in self.param_names])

    def _grads(self) -> torch.Tensor:
        if self._thetas is not None and all(t.grad is not None for t in self._thetas):
            return torch.stack([t.grad.detach().reshape(()) for t in self._thetas]).to(self.buffer.dtype)
        grads = self.loss_fn.theta_gradients()
        return self._as_row([grads.get(n, grads.get(f"grad_{n}", float("nan"))) for n in self.theta_names])

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
