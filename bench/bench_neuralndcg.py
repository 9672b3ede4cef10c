"""NeuralNDCG step time and memory: the scaling-vector Sinkhorn without host syncs against allRank's loop.

On the ``bench_losses.py`` batch (64 lists x 240 documents x 136 features, MLP ranker), interleaved
in one process, the median wall time of one forward + backward of ranker + loss for

- ``allrank loop``: the previous implementation, kept here as the baseline: allRank's
  ``sinkhorn_scaling`` (normalise columns, then rows, materialising the ``[B, n, n]`` matrix each
  time, and a host-side convergence test ``if converged: break`` every iteration);
- ``neuralndcg``: ``ltr.losses.neuralndcg`` (``check_every`` 10, and 0 = never syncs);
- ``approxndcg`` for scale.

It also checks that both NeuralNDCG implementations give the same value and gradient, counts their
host syncs per step (CUDA only; 0 expected with ``check_every=0``) and reports the memory autograd
keeps for backward per step (the bytes of distinct tensors saved by the loss's graph).
Target: ``neuralndcg`` <= 0.5 x ``allrank loop``.

    .venv/bin/python bench/bench_neuralndcg.py [--repeats 9] [--device cpu|cuda]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

from bench_losses import make_batch  # noqa: E402
from ltr.losses import make_loss  # noqa: E402
from ltr.losses._common import DEFAULT_EPS, check_batch, exp_gain, ideal_dcg, mean_over  # noqa: E402
from ltr.losses._common import rank_discounts, real_labels  # noqa: E402
from ltr.losses.neuralndcg import neural_sort  # noqa: E402
from ltr.rankers import make_ranker  # noqa: E402


class AllRankLoopNeuralNDCG(torch.nn.Module):
    """The baseline: allRank's Sinkhorn loop as this project ran it before (same NeuralSort)."""

    def __init__(self, temperature: float = 1.0, tol: float = 1e-6, max_iter: int = 50):
        super().__init__()
        self.temperature, self.tol, self.max_iter = temperature, tol, max_iter

    def forward(self, scores, labels):
        real = check_batch(scores, labels)
        n = scores.shape[1]
        gains = exp_gain(real_labels(labels, real, scores.dtype))
        P, valid = neural_sort(scores, real, self.temperature)
        real_rank = valid.any(dim=-1)
        padded_block = ~real_rank[:, :, None] & ~real[:, None, :]
        P = torch.where(padded_block, torch.ones_like(P), torch.where(valid, P, torch.zeros_like(P)))
        for _ in range(self.max_iter):
            P = P / P.sum(dim=1, keepdim=True).clamp(min=DEFAULT_EPS)
            P = P / P.sum(dim=2, keepdim=True).clamp(min=DEFAULT_EPS)
            with torch.no_grad():
                converged = torch.maximum((P.sum(dim=2) - 1).abs().max(), (P.sum(dim=1) - 1).abs().max()) < self.tol
            if converged:  # the host sync this issue removes
                break
        P = torch.where(valid, P, torch.zeros_like(P))
        dcg = ((P @ gains[:, :, None]).squeeze(-1) * rank_discounts(n, scores.device, scores.dtype)).sum(dim=-1)
        idcg = ideal_dcg(gains, n)
        return -mean_over(dcg / (idcg + DEFAULT_EPS), idcg > 0)


def saved_bytes(loss_fn, scores, labels) -> int:
    """Bytes of the distinct tensors autograd saves for the backward of ``loss_fn`` (one step)."""
    seen = {}

    def pack(t):
        seen[(t.untyped_storage().data_ptr(), t.device)] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss_fn(scores, labels)
    return sum(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    features, labels, mask = make_batch(args.device)
    torch.manual_seed(0)
    model = make_ranker("mlp", features.shape[-1]).to(device)
    losses = {"allrank loop": AllRankLoopNeuralNDCG(), "neuralndcg": make_loss("neuralndcg"),
              "neuralndcg check_every=0": make_loss("neuralndcg", check_every=0), "approxndcg": make_loss("approxndcg")}

    scores = model(features, mask).detach().requires_grad_(True)
    ref_value = losses["allrank loop"](scores, labels)
    (ref_grad,) = torch.autograd.grad(ref_value, scores)
    value = losses["neuralndcg"](scores, labels)
    (grad,) = torch.autograd.grad(value, scores)
    same = torch.allclose(value, ref_value, rtol=1e-4) and torch.allclose(grad, ref_grad, rtol=1e-3,
                                                                          atol=1e-4 * ref_grad.abs().max().item())
    print(f"batch {tuple(features.shape)} on {device}; NeuralNDCG value {value.item():.6f} vs allRank loop "
          f"{ref_value.item():.6f}, max |grad diff| {(grad - ref_grad).abs().max().item():.2e}: "
          f"{'same' if same else 'DIFFERENT'}")

    def step(loss_fn) -> float:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        model.zero_grad(set_to_none=True)
        loss_fn(model(features, mask), labels).backward()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return time.perf_counter() - start

    for loss_fn in losses.values():  # warm-up
        step(loss_fn)
    times = {name: [] for name in losses}
    for _ in range(args.repeats):  # interleaved: load from other processes hits all alike
        for name, loss_fn in losses.items():
            times[name].append(step(loss_fn))
    med = {name: statistics.median(t) * 1000 for name, t in times.items()}
    for name in losses:
        mib = saved_bytes(losses[name], scores, labels) / 2**20
        print(f"{name:<26} step {med[name]:8.1f} ms (median of {args.repeats}, interleaved)   "
              f"saved for backward {mib:7.1f} MiB")
    ratio = med["neuralndcg"] / med["allrank loop"]
    print(f"NeuralNDCG / allRank loop step time = {ratio:.3f}   {'ok' if ratio <= 0.5 else 'SLOW (target <= 0.5)'}"
          f"   (NeuralNDCG / ApproxNDCG = {med['neuralndcg'] / med['approxndcg']:.2f})")


if __name__ == "__main__":
    main()
