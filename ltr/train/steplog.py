"""Per-step training values (loss, LearnDCG's θ/b/α and θ gradients) buffered on the device."""
from __future__ import annotations

import math

import torch

# Rows of the on-device step buffer; a full buffer is flushed to the store.
STEP_BUFFER_ROWS = 512


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

