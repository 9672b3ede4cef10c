"""Training throughput per loss: queries/s and epoch time with the MLP ranker, plus peak memory.

A synthetic WEB10K-shaped fold (default 2,000 training queries, lists of 3..240 documents, 136
features, query-normalised) is built with the data layer's generator; every loss trains the same
MLP for ``--epochs`` epochs through the trainer's own pieces (``ListBatcher``, ``build_optimizer``,
``train_epoch`` with the on-device step log), so the figures are those of ``python -m ltr train``
minus validation. Epoch time is the median over the measured epochs, after one warm-up epoch
(``--warmup 0`` to skip). LearnDCG's epoch time must stay within 10% of ApproxNDCG's: the ratio is
measured separately with the two losses' epochs interleaved (robust to load from other processes)
and printed with PASS/FAIL.

Peak memory: on CUDA ``torch.cuda.max_memory_allocated`` (reset per loss); on CPU the process's
peak resident set size (``VmHWM`` from ``/proc/self/status``) of a fresh process per loss (reset
after loading the data by writing ``5`` to ``/proc/self/clear_refs``), i.e. everything the process
holds at its peak (data, model, Python, torch), not only the training step's tensors.

    .venv/bin/python bench/bench_training.py [--losses approxndcg learndcg] [--epochs 1] [--device cpu]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from ltr.data.batching import ListBatcher  # noqa: E402
from ltr.data.datasets import load_fold  # noqa: E402
from ltr.losses import LOSS_NAMES, make_loss  # noqa: E402
from ltr.rankers import make_ranker  # noqa: E402
from ltr.train import StepLog, build_optimizer, resolve_device, train_epoch  # noqa: E402


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_mib(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def epoch_runner(name: str, train, device, args, *, log: bool = True):
    """A closure training one more epoch of ``name`` (MLP, Adam) and returning its wall seconds
    (``log=False``: without the step log)."""
    torch.manual_seed(0)
    loss_fn = make_loss(name).to(device)
    model = make_ranker("mlp", train.n_features).to(device)
    optimizer = build_optimizer(model, loss_fn, 1e-3, 1e-3)
    batcher = ListBatcher(train, device, args.batch_size, slate_length=args.slate_length, shuffle=True, seed=0)
    step_log = StepLog(loss_fn, device) if log else None
    state = {"epoch": 0, "step": 0}

    def run_epoch() -> float:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        state["step"], mean_loss = train_epoch(model, loss_fn, optimizer, batcher, state["epoch"], state["step"],
                                               step_log=step_log, on_flush=step_log and step_log.drain)
        if step_log is not None:
            step_log.drain()  # what the trainer does at epoch end (one device->host copy)
        float(mean_loss)
        state["epoch"] += 1
        return time.perf_counter() - start

    run_epoch.steps = len(batcher)
    run_epoch.pretrain_s = getattr(loss_fn, "pretrain_seconds", None)
    run_epoch.pretrain_cached = getattr(loss_fn, "loaded_from_cache", None)
    return run_epoch


def bench_loss(name: str, train, device, args) -> dict:
    run_epoch = epoch_runner(name, train, device, args)
    reset_peak(device)
    for _ in range(args.warmup):
        run_epoch()
    seconds = statistics.median(run_epoch() for _ in range(args.epochs))
    return {"loss": name, "epoch_s": seconds, "queries_per_s": train.n_queries / seconds,
            "steps": run_epoch.steps, "peak_mib": peak_mib(device), "pretrain_s": run_epoch.pretrain_s,
            "pretrain_cached": run_epoch.pretrain_cached}


def bench_in_subprocess(name: str, args) -> dict:
    """One loss measured in a fresh process, so its peak RSS is its own (the allocator keeps freed
    memory, so a process-wide high-water mark would carry over from a heavier earlier loss)."""
    cmd = [sys.executable, __file__, "--one", name, "--queries", str(args.queries), "--epochs", str(args.epochs),
           "--warmup", str(args.warmup), "--batch-size", str(args.batch_size),
           "--slate-length", str(args.slate_length)] + (["--device", args.device] if args.device else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def paired_ratio(train, device, args) -> tuple[float, list[float], list[float]]:
    """LearnDCG / ApproxNDCG epoch time with the two losses' epochs interleaved, so that load from
    other processes on a shared machine hits both alike; the ratio of the medians."""
    approx, learn = epoch_runner("approxndcg", train, device, args), epoch_runner("learndcg", train, device, args)
    approx(), learn()  # warm-up
    a, b = [], []
    for _ in range(args.pair_epochs):
        a.append(approx())
        b.append(learn())
    return statistics.median(b) / statistics.median(a), a, b


def logging_overhead(train, device, args) -> tuple[float, list[float], list[float]]:
    """LearnDCG epoch time with the step log (every step) over without it, epochs interleaved."""
    logged, bare = epoch_runner("learndcg", train, device, args), epoch_runner("learndcg", train, device, args,
                                                                                log=False)
    logged(), bare()  # warm-up
    a, b = [], []
    for _ in range(args.log_epochs):
        a.append(bare())
        b.append(logged())
    return statistics.median(b) / statistics.median(a), a, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--losses", nargs="+", default=list(LOSS_NAMES))
    parser.add_argument("--queries", type=int, default=3340,
                        help="queries of the synthetic data set; fold 1 trains on 3/5 of them (default: 2004)")
    parser.add_argument("--epochs", type=int, default=1, help="measured epochs per loss (median)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--pair-epochs", type=int, default=9,
                        help="interleaved ApproxNDCG/LearnDCG epochs for the ratio (0: skip)")
    parser.add_argument("--log-epochs", type=int, default=5,
                        help="interleaved LearnDCG epochs with / without the step log for its overhead (0: skip)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--slate-length", type=int, default=240)
    parser.add_argument("--device", default=None)
    parser.add_argument("--no-isolate", dest="isolate", action="store_false",
                        help="measure every loss in this process (peak RSS then includes earlier losses' memory)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one loss, print a JSON line
    args = parser.parse_args()

    device = resolve_device(args.device)
    started = time.perf_counter()
    train = load_fold(f"synthetic-web10k:n_queries={args.queries}", 1, "train")
    if args.one:
        print(json.dumps(bench_loss(args.one, train, device, args)))
        return 0
    lengths = train.list_lengths()
    print(f"data: synthetic-web10k fold 1 train, {train.n_queries} queries, {train.n_documents} documents, "
          f"{train.n_features} features, list length mean {lengths.mean():.0f} max {lengths.max()} "
          f"(built/loaded in {time.perf_counter() - started:.1f}s)")
    print(f"device: {device}, torch threads {torch.get_num_threads()}, batch {args.batch_size} lists, "
          f"slate {args.slate_length}, MLP, epoch time = median of {args.epochs} after {args.warmup} warm-up")
    mem_label = "peak CUDA allocated" if device.type == "cuda" else "peak RSS (VmHWM, own process)"
    print(f"{'loss':<15} {'epoch s':>8} {'queries/s':>10} {'steps':>6} {mem_label:>34}")
    rows = {}
    for name in args.losses:
        row = bench_in_subprocess(name, args) if args.isolate else bench_loss(name, train, device, args)
        rows[name] = row
        extra = ""
        if row["pretrain_s"] is not None:
            extra = (f"  (surrogate pre-training {row['pretrain_s']:.1f}s, "
                     f"{'loaded from cache' if row['pretrain_cached'] else 'done before this epoch, not timed in it'})")
        print(f"{name:<15} {row['epoch_s']:>8.2f} {row['queries_per_s']:>10.0f} {row['steps']:>6} "
              f"{row['peak_mib']:>31.0f} MiB{extra}", flush=True)
    if args.log_epochs:
        overhead, a, b = logging_overhead(train, device, args)
        print(f"step log overhead, LearnDCG epoch with / without logging every step (median of {args.log_epochs} "
              f"interleaved): {overhead:.3f} ({'PASS' if overhead <= 1.03 else 'FAIL'}: must be <= 1.03)", flush=True)
    if args.pair_epochs:
        ratio, a, b = paired_ratio(train, device, args)
        verdict = "PASS" if ratio <= 1.10 else "FAIL"
        print(f"interleaved epochs (s): approxndcg {' '.join(f'{t:.2f}' for t in a)} | "
              f"learndcg {' '.join(f'{t:.2f}' for t in b)}")
        print(f"LearnDCG / ApproxNDCG epoch time (median of {args.pair_epochs} interleaved epochs each): "
              f"{ratio:.3f} ({verdict}: must be <= 1.10)")
        return 0 if verdict == "PASS" else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
