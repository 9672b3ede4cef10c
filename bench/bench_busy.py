"""Speed on a busy machine: the same work quiet and beside CPU-bound processes, side by side in one run.

A researcher trains in the background while a study runs; torch's default threads (one per core) then
wait for each other whenever another process holds a core. This bench measures, on this machine:

- **training**: the MQ2008 sample (``../shared/data/letor/mq2008_fold1_test.txt``, its 156 queries split
  into 5 folds by query, fold 1: 94 training queries), lambdaloss, MLP, batch 16, 15 epochs, each run a
  fresh ``python -m ltr train`` process; ``train_seconds`` (the training loop only) read from its run
  store, at torch's **default** threads, the **chosen** threads (:mod:`core.threads`) and **one**
  thread (``IRDASH_TORCH_THREADS``), quiet and busy;
- **grid**: ``[lambdaloss, approxndcg, listnet, learndcg]`` on that fold through ``ltr.grid.run_grid``
  at 1 and 2 workers (wall time, summed ``train_seconds``, the threads each host chose), quiet and busy;
- **encoding**: dense passage encoding (MiniLM, 128 DL19 passages; 64 with ``--quick``) and BERTScore
  (MiniLM, a quarter of them scored against another quarter) in one process at default, chosen and one
  thread, quiet and busy.

"Busy" = ``--burners`` (default 2) CPU-bound processes started by the bench beside the work and stopped
after it; "quiet" = the machine as it is without them (its load average is printed: other users' work
makes "quiet" busier than its name). Prints a table and the done-when checks (busy chosen <= 1.5x busy
one-thread, busy chosen <= 2x quiet chosen) and writes ``cache/bench/busy.json``.

    .venv/bin/python bench/bench_busy.py [--quick] [--burners 2] [--skip grid,encoding]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from core import paths  # noqa: E402
from core.atomic import atomic_write_text  # noqa: E402
from core.threads import TORCH_THREADS_ENV, WORKERS_ENV, busy_cores, usable_cores  # noqa: E402

PASSAGES = ROOT.parent / "shared" / "data" / "trec_dl" / "passages.msmarco-v1.dl19-dl20.tsv"
RUN = {"loss": "lambdaloss", "model": "mlp", "batch_size": 16, "epochs": 15}
GRID_LOSSES = ["lambdaloss", "approxndcg", "listnet", "learndcg"]


def torch_default_threads() -> int:
    """torch's own default in a fresh process (one thread per core), what a run got before core.threads."""
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                         capture_output=True, text=True, check=True, env=_env(None))
    return int(out.stdout.strip())


def _env(threads: int | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (TORCH_THREADS_ENV, WORKERS_ENV, "OMP_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT)
    if threads is not None:
        env[TORCH_THREADS_ENV] = str(threads)
    return env


@contextmanager
def burners(n: int):
    """``n`` CPU-bound processes (a Python busy loop each) for the block's duration."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0)  # running before the work starts (core.threads sees runnable tasks at once)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def train_once(folder: Path, threads: int | None, epochs: int, scratch: Path, timeout: float) -> dict:
    """One ``python -m ltr train`` run; its train_seconds, cpu_seconds, threads and load from the store."""
    from ltr.store import RunStore

    store = scratch / f"train-{time.monotonic_ns()}.sqlite"
    argv = [sys.executable, "-m", "ltr", "train", "--data", str(folder), "--fold", "1", "--loss", RUN["loss"],
            "--model", RUN["model"], "--batch-size", str(RUN["batch_size"]), "--epochs", str(epochs),
            "--patience", "0", "--device", "cpu", "--store", str(store), "--quiet"]
    try:
        subprocess.run(argv, cwd=ROOT, env=_env(threads), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:  # the collapse itself: recorded as "over the limit", not waited out
        return {"train_seconds": float("inf"), "cpu_seconds": float("nan"), "threads": threads or 0,
                "load_at_start": float("nan"), "test_ndcg10": float("nan"), "timed_out_after": timeout}
    with RunStore(store) as s:
        run = s.list_runs().iloc[0]
    return {"train_seconds": float(run["train_seconds"]), "cpu_seconds": float(run["cpu_seconds"]),
            "threads": int(run["threads"]), "load_at_start": float(run["load_at_start"]),
            "test_ndcg10": float(run["test_ndcg10"])}


def grid_once(folder: Path, workers: int, epochs: int, scratch: Path) -> dict:
    from ltr.grid import expand_grid, run_grid
    from ltr.store import RunStore

    spec = {"name": "bench-busy", "data": [str(folder)], "folds": [1], "losses": GRID_LOSSES, "models": ["mlp"],
            "train": {"epochs": epochs, "batch_size": RUN["batch_size"], "patience": 0, "device": "cpu"}}
    store = scratch / f"grid-{workers}-{time.monotonic_ns()}.sqlite"
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(_env(None))  # the hosts inherit this: torch threads chosen by each host
    try:
        start = time.perf_counter()
        outcome = run_grid(expand_grid(spec), store, workers=workers, devices=["cpu"], progress=False, force=True)
        wall = time.perf_counter() - start
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if outcome.failed:
        raise RuntimeError(f"grid failed: {outcome.failed}")
    with RunStore(store) as s:
        runs = s.list_runs()
    return {"wall_seconds": wall, "train_seconds": float(runs["train_seconds"].sum()),
            "threads": sorted(int(t) for t in runs["threads"])}


ENCODE_CHILD = r"""
import json, sys, time
import torch
from core.threads import encoder_choice
from pipeline.retrieval import dense
from pipeline.generation.bertscore import _scorer, resolve_encoder
texts = json.loads(sys.stdin.read())
spec, model = dense.load_encoder("minilm")
enc = resolve_encoder("minilm")
scorer = _scorer(enc)
answers, refs = texts[: len(texts) // 4], texts[len(texts) // 4: len(texts) // 2]
dense_texts = texts
chosen = encoder_choice().threads  # what dense retrieval and BERTScore run on
out = {"chosen": chosen}
model.encode(texts[:8]); scorer.score(answers[:2], refs[:2])  # warm-up, untimed
for label, n in (("chosen", chosen), ("one", 1), ("default", int(sys.argv[1]))):
    torch.set_num_threads(n)
    t = time.perf_counter(); model.encode(dense_texts, batch_size=64); d = time.perf_counter() - t
    t = time.perf_counter(); scorer.score(answers, refs); b = time.perf_counter() - t
    out[label] = {"threads": n, "dense_seconds": d, "bertscore_seconds": b}
print(json.dumps(out))
"""


def encode_once(texts: list[str], default_threads: int) -> dict:
    out = subprocess.run([sys.executable, "-c", ENCODE_CHILD, str(default_threads)], input=json.dumps(texts),
                         capture_output=True, text=True, cwd=ROOT, env=_env(None))
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "encoding child failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def passages(n: int) -> list[str]:
    texts = []
    with open(PASSAGES, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[2].strip():
                texts.append(parts[2])
            if len(texts) == n:
                break
    return texts


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="8 epochs, 64 passages, the grid busy only")
    ap.add_argument("--burners", type=int, default=2, help="CPU-bound processes beside the work (default 2)")
    ap.add_argument("--run-timeout", type=float, default=150.0,
                    help="seconds a training process may take before it is stopped and reported as over (150)")
    ap.add_argument("--skip", default="", help="comma-separated parts to leave out: grid, encoding")
    args = ap.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    from learndcg_identifiability import MQ2008_SAMPLE, mq2008_folds

    if not MQ2008_SAMPLE.is_file():
        print(f"{MQ2008_SAMPLE} is absent: this bench needs the shared MQ2008 sample", file=sys.stderr)
        return 2
    folder = mq2008_folds()
    epochs = 8 if args.quick else RUN["epochs"]
    default = torch_default_threads()
    started = time.time()
    result = {"cores": usable_cores(), "torch_default_threads": default, "burners": args.burners,
              "load_at_start": os.getloadavg()[0], "busy_at_start": busy_cores(), "run": {**RUN, "epochs": epochs},
              "training": {}, "grid": {}, "encoding": {}}
    print(f"# {usable_cores()} cores, torch default {default} threads, load average {os.getloadavg()[0]:.2f} "
          f"at start; busy = {args.burners} CPU-bound processes beside the work", flush=True)
    modes = {"chosen": None, "one": 1, "default": default}  # default last: under load it is the slow one
    texts = passages(64 if args.quick else 128) if "encoding" not in skip and PASSAGES.is_file() else []
    with tempfile.TemporaryDirectory(prefix="bench-busy-") as tmp:
        scratch = Path(tmp)
        for condition in ("quiet", "busy"):
            ctx = burners(args.burners) if condition == "busy" else _nothing()
            with ctx:
                for mode, threads in modes.items():
                    r = train_once(folder, threads, epochs, scratch, args.run_timeout)
                    result["training"][f"{condition}/{mode}"] = r
                    print(f"training {condition:5s} {mode:7s}: {r['train_seconds']:7.2f} s loop "
                          f"({r['cpu_seconds']:.2f} s CPU) on {r['threads']} thread(s), "
                          f"load {r['load_at_start']:.2f}, test NDCG@10 {r['test_ndcg10']:.4f}", flush=True)
                if "grid" not in skip and not (args.quick and condition == "quiet"):
                    for workers in (1, 2):
                        g = grid_once(folder, workers, epochs, scratch)
                        result["grid"][f"{condition}/{workers}"] = g
                        print(f"grid     {condition:5s} {workers} worker(s): {g['wall_seconds']:6.1f} s wall, "
                              f"{g['train_seconds']:6.2f} s loops, threads {g['threads']}", flush=True)
                if texts:
                    e = encode_once(texts, default)
                    result["encoding"][condition] = e
                    for mode in modes:
                        print(f"encoding {condition:5s} {mode:7s}: dense {e[mode]['dense_seconds']:6.2f} s, "
                              f"BERTScore {e[mode]['bertscore_seconds']:6.2f} s on {e[mode]['threads']} thread(s)",
                              flush=True)
    t = {k: v["train_seconds"] for k, v in result["training"].items()}
    checks = {
        "busy chosen / busy one thread (<= 1.5)": ratio(t["busy/chosen"], t["busy/one"]),
        "busy chosen / quiet chosen (<= 2)": ratio(t["busy/chosen"], t["quiet/chosen"]),
        "busy default / busy one thread (before: 27x)": ratio(t["busy/default"], t["busy/one"]),
        "quiet chosen / quiet one thread": ratio(t["quiet/chosen"], t["quiet/one"]),
        "quiet default / quiet one thread": ratio(t["quiet/default"], t["quiet/one"]),
    }
    limits = {"busy chosen / busy one thread (<= 1.5)": 1.5, "busy chosen / quiet chosen (<= 2)": 2.0}
    result["ratios"] = checks
    result["load_at_end"] = os.getloadavg()[0]
    result["seconds"] = time.time() - started
    print("\n| ratio | value | check |\n|---|---|---|")
    for name, value in checks.items():
        verdict = ("PASS" if value <= limits[name] else "FAIL") if name in limits else ""
        print(f"| {name} | {value:.2f} | {verdict} |")
    for condition in ("quiet", "busy"):
        if condition in result["encoding"]:
            e = result["encoding"][condition]
            print(f"| {condition} dense chosen / one thread | {ratio(e['chosen']['dense_seconds'], e['one']['dense_seconds']):.2f} | |")
            print(f"| {condition} BERTScore chosen / one thread | "
                  f"{ratio(e['chosen']['bertscore_seconds'], e['one']['bertscore_seconds']):.2f} | |")
    for condition in ("quiet", "busy"):
        if f"{condition}/1" in result["grid"]:
            g1, g2 = result["grid"][f"{condition}/1"], result["grid"][f"{condition}/2"]
            print(f"| {condition} grid 2 workers / 1 worker (wall) | {ratio(g2['wall_seconds'], g1['wall_seconds']):.2f} | |")
    out = paths.cache_subdir("bench") / "busy.json"
    atomic_write_text(out, json.dumps(result, indent=1, default=str))
    print(f"\n# load average {result['load_at_end']:.2f} at the end; {result['seconds']:.0f} s in all; wrote {out}")
    return 0


@contextmanager
def _nothing():
    yield


if __name__ == "__main__":
    sys.exit(main())
