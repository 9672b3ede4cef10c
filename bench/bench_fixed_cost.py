"""Where a training run's wall time goes besides its epochs: the fixed cost per process and per run (issue 34).

Three measurements on one data folder (default ``../shared/data/letor/MQ2008``, fold 1), each in a fresh
cache folder, printed as seconds and as ratios to the epochs' own time (``train_seconds``, the training
loop only, as the store records it):

1. **one run, one process** (``python -m ltr train``, as the CLI and the old one-process-per-run grid):
   the child's wall from outside, beside what it spends importing (``python -X importtime``'s total
   for ``ltr.train``: torch and its dependencies), reading the fold, and the epochs.
2. **phases inside one process**, timed in this script's child: interpreter + ``import torch``,
   ``import ltr.train``, the fold read (cold, then from :class:`ltr.train.inprocess.FoldCache`),
   ``prepare_run`` and ``train_run`` for a first run and a second run of the same process; what a
   second run of a long-lived host pays beyond its epochs is the per-run fixed cost.
3. **a grid of N runs** (``ltr.grid.run_grid``, workers=1: one trainer host) against the same N runs
   as one process each, wall and the sum of ``train_seconds``.

    .venv/bin/python bench/bench_fixed_cost.py [--data ../shared/data/letor/MQ2008] [--epochs 3] [--runs 4]
        [--out FILE.json]

Nothing is written outside a temporary folder unless ``--out`` names a file.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PHASES = r'''
import json, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
import torch
t_torch = time.perf_counter()
from ltr.store import RunStore
from ltr.train import RunConfig, train_run
from ltr.train.inprocess import FoldCache, train_one
from ltr.train.prepare import prepare_run
t_ltr = time.perf_counter()
args = json.loads(sys.argv[1])
folds = FoldCache()
out = {"import_torch": t_torch - t0, "import_ltr": t_ltr - t_torch, "runs": []}
with RunStore(args["store"]) as store:
    for i, seed in enumerate(args["seeds"]):
        cfg = RunConfig(**{**args["config"], "seed": seed})
        a = time.perf_counter()
        splits = folds.splits(cfg.data, cfg.fold)
        b = time.perf_counter()
        prepared = prepare_run(cfg, splits=splits)
        c = time.perf_counter()
        train_run(cfg, store, prepared=prepared)
        d = time.perf_counter()
        run = store.get_run(cfg.run_id)
        out["runs"].append({"fold_read": b - a, "prepare": c - b, "train_run": d - c,
                            "train_seconds": float(run["train_seconds"]), "threads": int(run["threads"])})
out["cpu_total"] = time.process_time() - c0
out["wall_total"] = time.perf_counter() - t0
print("PHASES " + json.dumps(out))
'''


def _import_seconds() -> float:
    """``python -X importtime -c 'import ltr.train'``: the cumulative microseconds of the top-level imports."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import ltr.train"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    total = 0
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[1].isdigit() and not parts[2].startswith(" "):
            if not line.split("|")[2].startswith("  "):  # top-level modules only (no indentation)
                total += int(parts[1])
    return total / 1e6


FIRST_ADAM = ("import sys, time, torch; t = time.perf_counter(); torch.optim.Adam([torch.zeros(1, requires_grad=True)]); "
              "print(time.perf_counter() - t, 'torch._dynamo' in sys.modules)")


def _first_adam_seconds() -> tuple[float, bool]:
    """A fresh process's first ``torch.optim.Adam(...)`` (torch already imported), and whether it imported
    torch._dynamo: the optimiser's constructor is wrapped by torch._compile's lazy dynamo import."""
    done = subprocess.run([sys.executable, "-c", FIRST_ADAM], capture_output=True, text=True, check=True)
    seconds, dynamo = done.stdout.split()
    return float(seconds), dynamo == "True"


def _train_seconds(store: Path) -> float:
    from ltr.store import RunStore

    with RunStore(store) as s:
        runs = s.list_runs(status="completed")
    return float(runs["train_seconds"].sum()), len(runs)


def _children_cpu() -> float:
    """CPU seconds (user + system) of this script's reaped children so far: a wall time on a shared machine
    counts the other users' load too, the CPU time does not (much)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "letor" / "MQ2008"))
    parser.add_argument("--fold", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=4, help="runs of the grid (seeds 0..N-1, loss listnet)")
    parser.add_argument("--loss", default="listnet")
    parser.add_argument("--out", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()
    if not Path(args.data).is_dir():
        sys.exit(f"--data {args.data}: no such folder of FoldK/ (the full MQ2008 is in ../shared/data/letor/MQ2008)")
    config = {"data": str(Path(args.data).resolve()), "fold": args.fold, "loss": args.loss, "model": "mlp",
              "epochs": args.epochs, "patience": 0, "device": "cpu"}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    figures: dict = {"data": config["data"], "fold": args.fold, "loss": args.loss, "epochs": args.epochs,
                     "machine": f"{platform.node()} {os.cpu_count()} cores", "load_before": os.getloadavg()[0],
                     "python": sys.version.split()[0], "threads_env": os.environ.get("IRDASH_TORCH_THREADS"),
                     "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                              text=True).stdout.strip()}
    with tempfile.TemporaryDirectory(prefix="irdash-bench-fixed-") as tmp:
        env["IRDASH_CACHE_DIR"] = str(Path(tmp) / "cache")
        os.environ["IRDASH_CACHE_DIR"] = env["IRDASH_CACHE_DIR"]
        from ltr.data.datasets import load_fold

        for split in ("train", "vali", "test"):  # the parse cache, written once before every timing
            load_fold(config["data"], args.fold, split)

        # 1. one run, one process, from outside
        from ltr.train import RunConfig

        store = Path(tmp) / "one.sqlite"
        cfg = RunConfig(**config)
        start, cpu = time.perf_counter(), _children_cpu()
        subprocess.run([sys.executable, "-m", "ltr", "train", *cfg.to_cli_args(), "--store", str(store), "--quiet"],
                       cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
        epochs, _ = _train_seconds(store)
        imports = _import_seconds()
        figures["one_process_run"] = {"wall": wall, "cpu": cpu, "train_seconds": epochs, "import_ltr_train": imports}
        print(f"1. one run in its own process: {wall:.2f} s wall ({cpu:.2f} s CPU) for {epochs:.2f} s of epochs "
              f"(wall/epochs {wall / epochs:.1f}x); importing ltr.train alone: {imports:.2f} s "
              f"({imports / wall:.0%} of the wall)", flush=True)

        # 2. phases inside one process, two runs
        store = Path(tmp) / "phases.sqlite"
        done = subprocess.run([sys.executable, "-c", PHASES, json.dumps({"config": config, "seeds": [0, 1],
                                                                           "store": str(store)})],
                              cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        phases = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("PHASES "))[7:])
        figures["phases"] = phases
        adam, dynamo = _first_adam_seconds()
        figures["first_adam"] = {"seconds": adam, "imports_torch_dynamo": dynamo}
        print(f"2. inside one process ({phases['cpu_total']:.2f} s CPU in all): import torch "
              f"{phases['import_torch']:.2f} s, import ltr.train {phases['import_ltr']:.2f} s; a process's first "
              f"Adam {adam:.2f} s ({'imports' if dynamo else 'does not import'} torch._dynamo)", flush=True)
        for i, run in enumerate(phases["runs"], 1):
            rest = run["train_run"] - run["train_seconds"]
            print(f"   run {i}: fold read {run['fold_read']:.2f} s, prepare {run['prepare']:.2f} s, train_run "
                  f"{run['train_run']:.2f} s of which epochs {run['train_seconds']:.2f} s (the rest: {rest:.2f} s: "
                  f"the first Adam above, warm-up, validation, test, store); run wall / epochs "
                  f"{(run['fold_read'] + run['prepare'] + run['train_run']) / run['train_seconds']:.2f}x", flush=True)

        # 3. a grid of N runs: one process each, and one trainer host
        from ltr.grid import expand_grid, run_grid

        spec = {"name": "fixed-cost", "data": [config["data"]], "folds": [args.fold], "losses": [args.loss],
                "models": ["mlp"], "seeds": list(range(args.runs)),
                "train": {"epochs": args.epochs, "patience": 0, "device": "cpu"}}
        grid = expand_grid(spec)
        store = Path(tmp) / "per-process.sqlite"
        start, cpu = time.perf_counter(), _children_cpu()
        for c in grid.configs:
            subprocess.run([sys.executable, "-m", "ltr", "train", *c.to_cli_args(), "--store", str(store), "--quiet"],
                           cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        per_process, per_process_cpu = time.perf_counter() - start, _children_cpu() - cpu
        per_process_epochs, _ = _train_seconds(store)
        store = Path(tmp) / "hosted.sqlite"
        start, cpu = time.perf_counter(), _children_cpu()
        outcome = run_grid(grid, store, workers=1, devices=["cpu"], progress=False)  # the host is reaped at its end
        hosted, hosted_cpu = time.perf_counter() - start, _children_cpu() - cpu
        if outcome.failed:
            sys.exit(f"the hosted grid failed: {outcome.failed}")
        hosted_epochs, n = _train_seconds(store)
        figures["grid"] = {"runs": n, "per_process_wall": per_process, "per_process_cpu": per_process_cpu,
                           "per_process_train_seconds": per_process_epochs, "hosted_wall": hosted,
                           "hosted_cpu": hosted_cpu, "hosted_train_seconds": hosted_epochs}
        print(f"3. grid of {n} runs: one process per run {per_process:.2f} s wall ({per_process_cpu:.2f} s CPU) for "
              f"{per_process_epochs:.2f} s of epochs ({per_process / per_process_epochs:.1f}x); one trainer host "
              f"{hosted:.2f} s ({hosted_cpu:.2f} s CPU) for {hosted_epochs:.2f} s ({hosted / hosted_epochs:.1f}x); "
              f"hosted / per-process: wall {hosted / per_process:.2f}, CPU {hosted_cpu / per_process_cpu:.2f}",
              flush=True)
    figures["load_after"] = os.getloadavg()[0]
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
