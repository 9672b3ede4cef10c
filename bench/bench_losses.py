"""Cost of each of the eleven losses on a WEB10K-shaped batch, and LearnDCG / ApproxNDCG.

    python bench/bench_losses.py [--device cpu|cuda] [--repeats 9] [--losses approxndcg,learndcg]

Batch: 64 lists x 240 documents x 136 random features, grades 0-4 skewed toward 0, no padding,
scored by an MLP ranker (``ltr.rankers.make_ranker("mlp", 136)`` when that module exists, else a
local 3-layer MLP; the output says which). Per loss it prints

- step ms: median wall time of one forward + backward of ranker + loss (after warm-up), all losses
  timed in one process;
- loss ms: the same for the loss alone on fixed scores (what the loss itself costs);
- peak MiB: extra memory of one forward + backward. On CUDA: ``torch.cuda.max_memory_allocated``
  above what was allocated before the step. On CPU: the rise of the process's peak resident set
  (``VmHWM``, reset through ``/proc/self/clear_refs``) during the first step of a fresh process
  per loss, so freed-but-cached memory of an earlier loss cannot hide it (Linux only);
- the ratio LearnDCG / ApproxNDCG of the step time, measured interleaved (alternating the two
  losses) to cancel drift; it must be <= 1.10 (PASS/FAIL).
- with ``learndcg_meta`` among the losses, its interleaved step-time ratio to ApproxNDCG, its step
  including the look-ahead hypergradient (one ``create_graph`` backward, a validation forward and
  backward, a second-order backward to θ): informational, not gated.

NeuralLoss pre-trains once into the cache (``cache/neuralloss/``); its pre-training time is printed.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from typing import NamedTuple  # noqa: E402

from torch import nn  # noqa: E402

from ltr.losses import LOSS_NAMES, make_loss  # noqa: E402

B, N, F = 64, 240, 136
GRADE_PROBABILITIES = (0.52, 0.32, 0.12, 0.03, 0.01)  # roughly WEB10K's label distribution
MAX_RATIO = 1.10


class _FallbackMLP(nn.Module):
    def __init__(self, n_features: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, features, mask):
        return self.net(features).squeeze(-1).masked_fill(~mask, 0.0)


def make_mlp() -> tuple[nn.Module, str]:
    try:
        from ltr.rankers import make_ranker
    except ImportError:
        return _FallbackMLP(F), "local fallback MLP 136-128-64-1 (ltr.rankers not importable)"
    return make_ranker("mlp", F), 'ltr.rankers.make_ranker("mlp", 136)'


def make_batch(device: str):
    gen = torch.Generator().manual_seed(0)
    features = torch.randn(B, N, F, generator=gen)
    labels = torch.multinomial(torch.tensor(GRADE_PROBABILITIES), B * N, replacement=True, generator=gen)
    labels = labels.view(B, N).float()
    mask = torch.ones(B, N, dtype=torch.bool)
    return features.to(device), labels.to(device), mask.to(device)


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


class ValidationBatch(NamedTuple):
    features: torch.Tensor
    labels: torch.Tensor
    mask: torch.Tensor


def build_loss(name: str, device: str, features, labels, mask) -> nn.Module:
    """``make_loss(name)``; learndcg_meta gets a validation batch of the training batch's shape."""
    loss_fn = make_loss(name).to(device)
    if loss_fn.has_hypergradient:
        loss_fn.attach_validation([ValidationBatch(features, labels, mask)])
    return loss_fn


def step(model, loss_fn, features, labels, mask) -> None:
    """One training step's forward + backward, as the trainer does it (learndcg_meta: with its
    look-ahead hypergradient, which is the whole of its extra cost)."""
    model.zero_grad(set_to_none=True)
    loss_fn.zero_grad(set_to_none=True)
    scores = model(features, mask)
    if loss_fn.has_hypergradient:
        loss_fn.hypergradient_backward(model, scores, labels, step=0, lr=1e-3)
    else:
        loss_fn(scores, labels).backward()


def loss_only(loss_fn, scores, labels) -> None:
    loss_fn.zero_grad(set_to_none=True)
    torch.autograd.grad(loss_fn(scores, labels), scores)


def timed(fn, device: str, warmup: int, repeats: int) -> list[float]:
    for _ in range(warmup):
        fn()
    sync(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - start)
    return times


def _rss_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def peak_memory_child(name: str, device: str) -> dict:
    """Runs in a fresh process: peak extra memory of the first forward + backward with loss ``name``."""
    torch.manual_seed(0)
    model, _ = make_mlp()
    model = model.to(device)
    features, labels, mask = make_batch(device)
    loss_fn = build_loss(name, device, features, labels, mask)
    if device.startswith("cuda"):
        sync(device)
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(model, loss_fn, features, labels, mask)
        sync(device)
        return {"peak_mib": (torch.cuda.max_memory_allocated() - before) / 2**20, "how": "cuda max_memory_allocated"}
    before = _rss_mib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM (peak RSS) to the current RSS
    step(model, loss_fn, features, labels, mask)
    return {"peak_mib": _rss_mib("VmHWM") - before, "how": "peak RSS rise, first step, fresh process"}


def measure_times(names, device: str, warmup: int, repeats: int) -> dict:
    torch.manual_seed(0)
    model, _ = make_mlp()
    model = model.to(device)
    features, labels, mask = make_batch(device)
    scores = torch.randn(B, N, device=device, requires_grad=True)
    results = {}
    for name in names:
        loss_fn = build_loss(name, device, features, labels, mask)
        step_s = timed(lambda: step(model, loss_fn, features, labels, mask), device, warmup, repeats)
        loss_s = timed(lambda: loss_only(loss_fn, scores, labels), device, warmup, repeats)
        results[name] = {"step_ms": 1e3 * statistics.median(step_s), "loss_ms": 1e3 * statistics.median(loss_s),
                         "pretrain_s": getattr(loss_fn, "pretrain_seconds", None)}
    return results


def interleaved_ratio(device: str, warmup: int, repeats: int, candidate: str = "learndcg") -> tuple[float, float]:
    """Median step time of ``candidate`` over ApproxNDCG, and the same for the loss alone, interleaved."""
    torch.manual_seed(0)
    model, _ = make_mlp()
    model = model.to(device)
    features, labels, mask = make_batch(device)
    scores = torch.randn(B, N, device=device, requires_grad=True)
    pair = {name: build_loss(name, device, features, labels, mask) for name in ("approxndcg", candidate)}
    step_t = {name: [] for name in pair}
    loss_t = {name: [] for name in pair}
    for _ in range(repeats):
        for name, loss_fn in pair.items():
            step_t[name] += timed(lambda: step(model, loss_fn, features, labels, mask), device, warmup, 1)
            loss_t[name] += timed(lambda: loss_only(loss_fn, scores, labels), device, warmup, 1)
        warmup = 0
    ratio = statistics.median(step_t[candidate]) / statistics.median(step_t["approxndcg"])
    loss_ratio = statistics.median(loss_t[candidate]) / statistics.median(loss_t["approxndcg"])
    return ratio, loss_ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--losses", default=",".join(LOSS_NAMES), help="comma-separated subset of the losses")
    parser.add_argument("--peak-memory-child", metavar="LOSS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda but torch sees no CUDA device")
    if args.peak_memory_child:
        print(json.dumps(peak_memory_child(args.peak_memory_child, args.device)))
        return 0
    names = [n.strip() for n in args.losses.split(",") if n.strip()]
    unknown = set(names) - set(LOSS_NAMES)
    if unknown:
        parser.error(f"unknown losses {sorted(unknown)}; choose from {', '.join(LOSS_NAMES)}")

    _, ranker = make_mlp()
    print(f"batch {B} lists x {N} docs x {F} features, ranker: {ranker}")
    print(f"device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"median of {args.repeats} after {args.warmup} warm-up")
    # NeuralLoss first in its own process would count pre-training in the memory; build it now
    if "neuralloss" in names:
        make_loss("neuralloss")
    times = measure_times(names, args.device, args.warmup, args.repeats)
    memory = {}
    for name in names:
        out = subprocess.run([sys.executable, __file__, "--device", args.device, "--peak-memory-child", name],
                             capture_output=True, text=True, check=True)
        memory[name] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"peak memory: {memory[names[0]]['how']}")
    print(f"{'loss':<16}{'step ms':>10}{'loss ms':>10}{'peak MiB':>10}  notes")
    for name in names:
        t, note = times[name], ""
        if t["pretrain_s"] is not None:
            note = f"pre-training took {t['pretrain_s']:.1f} s when first run (cached since)"
        print(f"{name:<16}{t['step_ms']:>10.1f}{t['loss_ms']:>10.1f}{memory[name]['peak_mib']:>10.1f}  {note}")
    ratio, loss_ratio = interleaved_ratio(args.device, args.warmup, max(args.repeats, 15))
    verdict = "PASS" if ratio <= MAX_RATIO else "FAIL"
    print(f"LearnDCG / ApproxNDCG step time (interleaved): {ratio:.3f} (<= {MAX_RATIO}: {verdict}); "
          f"loss alone: {loss_ratio:.3f}")
    if "learndcg_meta" in names:  # informational: the look-ahead hypergradient has a price, stated, not gated
        meta, _ = interleaved_ratio(args.device, args.warmup, max(args.repeats, 15), candidate="learndcg_meta")
        print(f"learndcg_meta / ApproxNDCG step time with its hypergradient (interleaved): {meta:.3f}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
