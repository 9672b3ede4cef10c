"""Wall time of the same small grid with the local runner and with Ray on this machine, and overhead per run.

The grid: ``--runs`` runs (default 8: folds 1-4 x ranknet/learndcg) on a small synthetic
MQ2008-shaped data set, MLP, ``--epochs`` epochs each, CPU. Both executors get the same slots
(``--slots``, default 2): ``python -m ltr grid --workers 2`` (one ``python -m ltr train`` process
per run, threads split over the slots) and ``--executor ray`` on a local Ray instance of 2 CPUs
(one Ray task per run, 1 CPU each, streaming through the store actor, checkpoints mirrored through
fsspec). Rounds alternate local / Ray (``--rounds``, each on a fresh store), so load from other
processes hits both alike. Round 0 is reported on its own (cold: Ray starts its store actor and
worker processes, which import torch and read the folds once); the warm figures are medians of the
other rounds.

Per executor:

- ``wall``: submitting the grid until every run is stored completed (Ray: without starting Ray;
  the Ray instance's start is reported on its own, it is paid once per driver);
- ``overhead/run`` = (wall x slots - sum of the runs' ``train_seconds``) / runs: slot time not spent
  in training epochs (process start and imports, data loading, store writes, test evaluation,
  scheduling), per run.

    .venv/bin/python bench/bench_ray.py [--runs 8] [--epochs 3] [--rounds 4] [--slots 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.ray_cluster import RaySettings, connect  # noqa: E402
from ltr.grid import expand_grid, run_grid  # noqa: E402
from ltr.ray_runner import run_grid_ray  # noqa: E402
from ltr.store import RunStore  # noqa: E402

LOSSES = ("ranknet", "learndcg")


def make_grid(runs: int, epochs: int, data: str):
    folds = list(range(1, runs // len(LOSSES) + 1))
    spec = {"name": "bench-ray", "data": [data], "folds": folds, "losses": list(LOSSES), "models": ["mlp"],
            "train": {"epochs": epochs, "batch_size": 16, "lr": 0.002, "patience": 0}}
    return expand_grid(spec, source="bench")


def train_seconds(store_path: Path) -> float:
    with RunStore(store_path) as store:
        runs = store.list_runs(status="completed")
    return float(runs["train_seconds"].sum()), len(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--queries", type=int, default=300, help="queries of the synthetic data set (all splits)")
    args = parser.parse_args()
    data = f"synthetic-mq2008:n_queries={args.queries}"
    grid = make_grid(args.runs, args.epochs, data)
    results: dict[str, list[tuple[float, float]]] = {"local": [], "ray": []}
    with tempfile.TemporaryDirectory(prefix="irdash-bench-ray-") as tmp:
        os.environ["IRDASH_CACHE_DIR"] = tmp  # the synthetic data is generated once, in the warm-up
        os.environ["OMP_NUM_THREADS"] = "1"
        from ltr.data.datasets import load_fold

        load_fold(data, 1, "train")
        start = time.perf_counter()
        connect(RaySettings(local_cpus=args.slots, local_object_store_mb=200), log_to_driver=False)
        ray_start = time.perf_counter() - start
        settings = RaySettings(executor="ray", cpus_per_run=1, checkpoint_dir=f"{tmp}/ray-ckpt")
        for r in range(args.rounds):
            for name in ("local", "ray"):
                store_path = Path(tmp) / f"{name}-{r}" / "runs.sqlite"
                start = time.perf_counter()
                if name == "local":
                    outcome = run_grid(grid, store_path, workers=args.slots, devices=["cpu"], progress=False)
                else:
                    outcome = run_grid_ray(grid, store_path, settings, progress=False, say=lambda msg: None)
                wall = time.perf_counter() - start
                trained, n = train_seconds(store_path)
                if outcome.failed or n != args.runs:
                    raise SystemExit(f"{name} round {r}: {n} completed, failed: {outcome.failed}")
                results[name].append((wall, trained))
                print(f"round {r} {name:<5} wall {wall:6.1f} s  training {trained:6.1f} s", flush=True)
        import ray

        ray.shutdown()
    print(f"\n{args.runs} runs x {args.epochs} epochs, {args.slots} slots, {data}; Ray instance start "
          f"{ray_start:.1f} s (once per driver, not in 'wall'). Round 0 is cold (Ray: store actor and worker "
          f"processes start, torch imported, folds read); warm = median of rounds 1..{args.rounds - 1}.")
    summary = {}
    for name, rows in results.items():
        warm = rows[1:] or rows
        wall = statistics.median(w for w, _ in warm)
        overhead = statistics.median((w * args.slots - t) / args.runs for w, t in warm)
        cold_overhead = (rows[0][0] * args.slots - rows[0][1]) / args.runs
        summary[name] = wall
        print(f"{name:<5} cold wall {rows[0][0]:6.1f} s (overhead/run {cold_overhead:5.2f} slot-s)   warm wall "
              f"{wall:6.1f} s   overhead/run {overhead:5.2f} slot-s   ({args.runs / wall * 60:.1f} runs/min)")
    print(f"warm ray / local wall ratio: {summary['ray'] / summary['local']:.2f}")

if __name__ == "__main__":
    main()
