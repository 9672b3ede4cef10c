"""The training pieces: the optimiser, one pass over the training batches, evaluation."""
from __future__ import annotations

import threading
import time
from typing import Callable

import torch

from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.metrics import ndcg_table
from ltr.train.config import RunCancelled, RunInputError
from ltr.train.steplog import StepLog

# Flush buffered step metrics (and so beat the heartbeat) at least this often while training.
FLUSH_SECONDS = 10.0
EVAL_BATCH_SIZE = 128


def build_optimizer(model: torch.nn.Module, loss_fn: torch.nn.Module, lr: float, loss_lr: float) -> torch.optim.Adam:
    """Adam over the ranker (``lr``) and the loss's learnable parameters (``loss_lr``), one group each."""
    groups = [{"params": [p for p in model.parameters() if p.requires_grad], "lr": lr}]
    loss_params = [p for p in loss_fn.parameters() if p.requires_grad]
    if loss_params:
        groups.append({"params": loss_params, "lr": loss_lr})
    return torch.optim.Adam(groups)


def train_epoch(model, loss_fn, optimizer, batcher, epoch: int, step: int, *,
                step_log: StepLog | None = None, on_flush: Callable[[], None] | None = None,
                cancel: threading.Event | None = None) -> tuple[int, torch.Tensor]:
    """One pass over the training batches; returns ``(next step, mean training loss as a 0-d tensor)``.

    ``on_flush`` is called when the step buffer is full or ``FLUSH_SECONDS`` passed since the last
    call (it drains ``step_log`` to the store and so beats the heartbeat). A set ``cancel`` event
    raises :class:`RunCancelled` before the next step (an attribute read, no host sync).
    """
    model.train()
    loss_fn.train()
    batcher.set_epoch(epoch)
    total, n_batches = None, 0
    last_flush = time.monotonic()
    for batch in batcher:
        if cancel is not None and cancel.is_set():
            raise RunCancelled("cancel requested")
        scores = model(batch.features, batch.mask)
        value = loss_fn(scores, batch.labels)
        optimizer.zero_grad(set_to_none=True)
        if loss_fn.has_hypergradient:  # learndcg_meta: θ learns from validation NDCG
            loss_fn.hypergradient_backward(model, scores, batch.labels, step=step, lr=optimizer.param_groups[0]["lr"])
        else:
            value.backward()
        # Logged after backward (θ gradients of this step) and before the update (θ used in it).
        if step_log is not None:  # it records the steps its ``every`` asks for
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


def warm_up(model, loss_fn, batcher, epoch: int, device: torch.device) -> None:
    """One untimed forward and backward pass on the widest training batch of ``epoch``, before the
    timed loop, so that no run's ``train_seconds`` holds one-time costs (the thread pool's start, the
    allocator growing to the widest batch, lazy CUDA/cuBLAS initialisation) that a later run of the
    same process would not pay. Nothing the run computes changes: no optimiser step, the gradients
    are dropped, and every RNG state (dropout's draws) is restored."""
    batcher.set_epoch(epoch)
    widest = max(batcher, key=lambda b: b.features.shape[0] * b.features.shape[1])
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        model.train()
        loss_fn.train()
        value = loss_fn(model(widest.features, widest.mask), widest.labels)
        if value.requires_grad:
            value.backward()
    for p in (*model.parameters(), *loss_fn.parameters()):
        p.grad = None
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def evaluate(model, batcher, n_queries: int, ks=NDCG_CUTOFFS, tick: Callable[[], None] | None = None) -> torch.Tensor:
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

