"""Peak memory of a training step, estimated before a run starts.

Whole lists are the default (``slate_length=None``), and some losses hold several ``[B, n, n]``
tensors per step: on WEB10K (lists of ~1,250 documents) one such float32 tensor at batch size 64 is
400 MB, and NeuralNDCG keeps about a hundred. Rather than let the machine swap or the trainer be
OOM-killed, :func:`check_training_memory` estimates the peak of the largest training step and
refuses the run (one clear line naming the slate length that would fit and the study's default)
when it exceeds ``HEADROOM`` of the memory available on the device.

How the estimate is made, for any ranker and loss: one forward and backward pass on copies of the
real ranker and loss at three list lengths (one list of 64, 160 and 256 documents), counting the
bytes autograd saves for the backward pass; a quadratic in the list length fitted through those
three points (and a power law beyond them, see :func:`saved_bytes_per_list`) extrapolates to the
real list length and batch size. The peak is taken as ``1.5 x saved + TRANSIENT_SQUARES x B n^2 x 4``
(the loss's transient ``[B, n, n]`` tensors and the gradients come on top of the saved ones).
Measured on CPU by ``bench/bench_memory_estimate.py`` (one real step on 8 lists of 500
documents, growth of the peak RSS), estimate / measured was 1.20 lambdaloss, 1.31 listnet +
context_aware, 1.43 neuralndcg, 1.63 ranknet, 2.2-2.3 approxndcg and learndcg, 5.6 listnet + mlp
(14 MiB measured): an upper estimate, up to about twice the real peak for the pairwise losses. The probe
runs on copies under a forked RNG, so it changes neither the run's model nor its random stream.

Escape hatch: ``IRDASH_SKIP_MEMORY_CHECK=1`` (e.g. on a machine with generous swap).
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass

import numpy as np
import torch

HEADROOM = 0.8  # at most this share of the available memory may be planned for one run
PROBE_LENGTHS = (64, 160, 256)  # long enough for losses whose iteration count grows with n (NeuralNDCG)
PROBE_LISTS = 1
SAVED_FACTOR = 1.5
TRANSIENT_SQUARES = 8  # [B, n, n] float32 transients besides the saved tensors
SKIP_ENV = "IRDASH_SKIP_MEMORY_CHECK"


class MemoryEstimateError(ValueError):
    """A run whose estimated peak memory exceeds what the device has available."""


@dataclass(frozen=True)
class StepMemory:
    """The estimated peak of the largest training step, and what it was estimated for."""

    bytes: int
    batch_size: int
    list_length: int
    saved_per_list: tuple[float, ...]  # bytes autograd saved for one list of each PROBE_LENGTHS

    def at(self, list_length: int, batch_size: int | None = None) -> int:
        return _peak(self.saved_per_list, batch_size or self.batch_size, list_length)


def saved_bytes_per_list(saved_per_list, n: int) -> float:
    """Saved bytes for one list of ``n`` documents, from the probes.

    The quadratic through the three probes (exact for a step whose tensors are n x n, n and
    constant). Beyond the longest probe, the larger of that and a power law through the two longest
    probes with its exponent clamped to [1, 2]: NeuralNDCG's Sinkhorn iteration count still grows
    up to ~256 documents (which is why the probes are that long), so its quadratic alone could bend.
    """
    lengths = PROBE_LENGTHS
    quadratic = max(float(np.polyval(np.polyfit(lengths, saved_per_list, 2), n)), 0.0)
    if n <= lengths[-1]:
        return quadratic
    s2, s3 = max(saved_per_list[-2], 1.0), max(saved_per_list[-1], 1.0)
    exponent = min(max(np.log(s3 / s2) / np.log(lengths[-1] / lengths[-2]), 1.0), 2.0)
    return max(quadratic, s3 * (n / lengths[-1]) ** exponent)


def _peak(saved_per_list, batch_size: int, n: int) -> int:
    saved = batch_size * saved_bytes_per_list(saved_per_list, n)
    return int(SAVED_FACTOR * saved + TRANSIENT_SQUARES * batch_size * n * n * 4)


def _saved_bytes(model: torch.nn.Module, loss_fn: torch.nn.Module, n_features: int, n: int,
                 device: torch.device) -> int:
    total = [0]

    def pack(t: torch.Tensor):
        total[0] += t.numel() * t.element_size()
        return t

    features = torch.linspace(-1.0, 1.0, PROBE_LISTS * n * n_features, device=device).reshape(PROBE_LISTS, n, n_features)
    labels = (torch.arange(PROBE_LISTS * n, device=device) % 3).float().reshape(PROBE_LISTS, n)
    mask = torch.ones(PROBE_LISTS, n, dtype=torch.bool, device=device)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        value = loss_fn(model(features, mask), labels)
    value.backward()
    return total[0]


def estimate_step_memory(model: torch.nn.Module, loss_fn: torch.nn.Module, n_features: int, batch_size: int,
                         list_length: int, device: torch.device | str = "cpu") -> StepMemory:
    """Estimated peak bytes of one training step on ``batch_size`` lists of ``list_length`` documents."""
    device = torch.device(device)
    probe_model, probe_loss = copy.deepcopy(model).train(), copy.deepcopy(loss_fn).train()
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        saved = tuple(_saved_bytes(probe_model, probe_loss, n_features, n, device) / PROBE_LISTS
                      for n in PROBE_LENGTHS)
    return StepMemory(_peak(saved, batch_size, list_length), batch_size, list_length, saved)


def available_bytes(device: torch.device | str) -> int | None:
    """Memory a new run can use on ``device``: free GPU memory, or the kernel's MemAvailable (None: unknown)."""
    device = torch.device(device)
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def largest_fitting_slate(step: StepMemory, budget: int) -> int | None:
    """The longest list length (up to the step's) whose step fits in ``budget`` bytes; None if not even 2."""
    lo, hi = 1, step.list_length
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if step.at(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo if lo >= 2 and step.at(lo) <= budget else None


def _size(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def check_training_memory(model: torch.nn.Module, loss_fn: torch.nn.Module, *, n_features: int,
                          list_lengths: np.ndarray, batch_size: int, slate_length: int | None,
                          device: torch.device | str, what: str, study_slate_length: int | None = None,
                          available: int | None = None) -> StepMemory | None:
    """Refuse (:class:`MemoryEstimateError`) a run whose largest training step would not fit.

    ``list_lengths`` are the training split's; the largest batch holds the longest lists (the
    batcher buckets lists by length). Returns the estimate (None when the check is skipped).
    """
    if os.environ.get(SKIP_ENV, "").strip() in ("1", "true", "yes"):
        return None
    longest = int(np.max(list_lengths)) if len(list_lengths) else 0
    n = min(longest, slate_length) if slate_length else longest
    batch = int(min(batch_size, len(list_lengths)))
    if n < 2 or batch < 1:
        return None
    step = estimate_step_memory(model, loss_fn, n_features, batch, n, device)
    available = available_bytes(device) if available is None else available
    if available is None or step.bytes <= HEADROOM * available:
        return step
    budget = int(HEADROOM * available)
    fits = largest_fitting_slate(step, budget)
    lists = f"lists of up to {n:,} documents" + ("" if slate_length else " (whole lists)")
    if fits and study_slate_length and study_slate_length <= fits:
        advice = f"use --slate-length {study_slate_length} (the study's setting for this data set) or up to {fits}"
    elif fits:
        advice = f"use --slate-length {fits} or less" + (
            f" (the study trains this data set with {study_slate_length})" if study_slate_length else "")
    else:
        advice = "even short lists do not fit at this batch size"
    raise MemoryEstimateError(
        f"{what}: a training step on {batch} {lists} needs about {_size(step.bytes)}, more than "
        f"{HEADROOM:.0%} of the {_size(available)} available on {torch.device(device).type}; {advice}, "
        f"or lower --batch-size ({SKIP_ENV}=1 skips this check)")
