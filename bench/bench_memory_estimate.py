"""How close ltr.memory's estimate is to the real peak memory of a training step (CPU).

    python bench/bench_memory_estimate.py [--lists 8] [--docs 500]

Per (loss, ranker): a fresh process builds the ranker and loss, asks ``ltr.memory`` for its estimate,
then runs one real forward + backward on random lists and measures the growth of the process's peak
resident set (``ru_maxrss``) over that step. Prints both and their ratio (estimate / measured): the
guard should over-estimate a little rather than under-estimate.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIRS = [("neuralndcg", "mlp"), ("approxndcg", "mlp"), ("learndcg", "mlp"), ("lambdaloss", "mlp"), ("ranknet", "mlp"),
         ("listnet", "mlp"), ("listnet", "context_aware")]
CHILD = """
import resource, sys, torch
from ltr import memory
from ltr.losses import make_loss
from ltr.rankers import make_ranker
loss_name, model_name, B, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(1)
torch.manual_seed(0)
model, loss = make_ranker(model_name, 46), make_loss(loss_name)
est = memory.estimate_step_memory(model, loss, 46, B, n).bytes
x, mask = torch.randn(B, n, 46), torch.ones(B, n, dtype=torch.bool)
y = torch.randint(0, 3, (B, n)).float()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
loss(model(x, mask), y).backward()
peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024
print(f"{loss_name:11s} {model_name:13s} {B} x {n}: measured {peak / 2**20:7.0f} MiB, "
      f"estimate {est / 2**20:7.0f} MiB, estimate/measured {est / max(peak, 1):.2f}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lists", type=int, default=8)
    parser.add_argument("--docs", type=int, default=500)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    for loss, model in PAIRS:
        out = subprocess.run([sys.executable, "-c", CHILD, loss, model, str(args.lists), str(args.docs)], cwd=ROOT,
                             env=env, capture_output=True, text=True)
        print(out.stdout.strip() or out.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
