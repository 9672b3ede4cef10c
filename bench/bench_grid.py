"""Grid throughput: one process per run (the old mechanism) against trainer hosts (many runs per process).

Runs the same grid (default ``ltr/configs/synthetic_small.toml``, 20 runs) twice into fresh stores
in fresh cache folders, side by side in this script, and prints both wall times and their ratio:

- ``per-process``: every run a ``python -m ltr train`` process started one after another (what
  ``ltr grid --workers 1`` did before: start-up and fold reading paid per run);
- ``hosted``: ``ltr.grid.run_grid(workers=1)``: one ``python -m ltr worker`` host trains run after
  run, each fold read once.

The synthetic data are generated once, before both timings, into a shared cache. Both mechanisms
must give the same test NDCG per run (checked). The target is hosted <= 1/3 of per-process.

    .venv/bin/python bench/bench_grid.py [--config ltr/configs/synthetic_small.toml] [--runs 20] [--order old,new]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def per_process(configs, store: Path) -> float:
    start = time.perf_counter()
    for cfg in configs:
        subprocess.run([sys.executable, "-m", "ltr", "train", *cfg.to_cli_args(), "--store", str(store), "--quiet"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def hosted(grid, store: Path) -> float:
    from ltr.grid import run_grid

    start = time.perf_counter()
    outcome = run_grid(grid, store, workers=1, devices=["cpu"], progress=False)
    if outcome.failed:
        raise RuntimeError(f"hosted grid failed: {outcome.failed}")
    return time.perf_counter() - start


def test_means(store: Path) -> dict:
    from ltr.store import RunStore

    with RunStore(store) as s:
        runs = s.list_runs(status="completed")
    return dict(zip(runs["run_id"], runs["test_ndcg10"].round(10)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "ltr" / "configs" / "synthetic_small.toml"))
    parser.add_argument("--runs", type=int, default=None, help="only the first N runs of the grid")
    parser.add_argument("--order", default="old,new", help="which mechanism runs first (old,new or new,old)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="irdash-bench-grid-") as tmp:
        os.environ["IRDASH_CACHE_DIR"] = str(Path(tmp) / "cache")
        from ltr.data.datasets import load_fold
        from ltr.grid import expand_grid, read_grid_file

        grid = expand_grid(read_grid_file(args.config), source=args.config)
        grid.configs = grid.configs[: args.runs] if args.runs else grid.configs
        for data, fold in sorted({(c.data, c.fold) for c in grid.configs}):
            load_fold(data, fold, "train")  # generate the synthetic data (and its parse cache) up front
        seconds = {}
        for which in args.order.split(","):
            store = Path(tmp) / f"{which}.sqlite"
            seconds[which] = per_process(grid.configs, store) if which == "old" else hosted(grid, store)
            print(f"grid {grid.name} ({len(grid.configs)} runs) {'one process per run' if which == 'old' else 'hosted':<20}"
                  f" {seconds[which]:7.1f} s  ({seconds[which] / len(grid.configs):.2f} s/run)", flush=True)
        if set(seconds) == {"old", "new"}:
            same = test_means(Path(tmp) / "old.sqlite") == test_means(Path(tmp) / "new.sqlite")
            ratio = seconds["new"] / seconds["old"]
            verdict = "ok" if ratio <= 1 / 3 else "SLOW (target <= 0.33)"
            print(f"grid hosted / one-process-per-run = {ratio:.3f} ({1 / ratio:.1f}x faster)   {verdict}   "
                  f"same test NDCG@10 per run: {same}")


if __name__ == "__main__":
    main()
