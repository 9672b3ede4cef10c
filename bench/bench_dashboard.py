"""Dashboard render time with a large run store (target: every page under 2 s).

Seeds a throw-away store with 500 completed runs (3 synthetic data sets x 4 rankers x 11 losses x
5 folds, cut at 500) holding about 1 million step-metric rows (LearnDCG runs log 9 series of 1,500
steps, the others an 850-step loss series), 50 epochs of validation metrics and 200 per-query
results per run, then renders each page with streamlit's AppTest: one warm-up render (imports),
then the median of ``--repeats`` renders. Prints one line per page and the store's size.

    .venv/bin/python bench/bench_dashboard.py [--runs 500] [--repeats 5]
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LEARN_NAMES = ("loss", "theta_g", "theta_d", "theta_alpha", "b_g", "b_d", "alpha", "grad_theta_d", "grad_theta_g")
LEARN_STEPS, OTHER_STEPS, EPOCHS, QUERIES = 1500, 850, 50, 200


def seed_store(path: Path, n_runs: int) -> int:
    from ltr.losses import LOSS_NAMES
    from ltr.rankers import RANKER_NAMES
    from ltr.store import RunStore

    rng = np.random.default_rng(0)
    grid = itertools.product(("synthetic-mq2008", "synthetic-mq2007", "synthetic-web10k"), RANKER_NAMES,
                             LOSS_NAMES, range(1, 6))
    step_rows = 0
    with RunStore(path) as store:
        for data, model, loss, fold in itertools.islice(grid, n_runs):
            run_id = f"{data}-f{fold}-{loss}-{model}-bench"
            config = {"data": data, "fold": fold, "loss": loss, "model": model, "epochs": EPOCHS, "lr": 1e-3,
                      "loss_lr": 1e-3, "batch_size": 64, "slate_length": None, "patience": 10, "seed": 0,
                      "loss_params": {}, "model_params": {}}
            store.register_run(run_id, config, total_epochs=EPOCHS)
            store.start_run(run_id, device="cpu")
            learn = loss == "learndcg"
            names, n_steps = (LEARN_NAMES, LEARN_STEPS) if learn else (("loss",), OTHER_STEPS)
            values = rng.normal(size=(n_steps, len(names))).tolist()
            store.log_steps(run_id, [(s, s * EPOCHS // n_steps, dict(zip(names, v))) for s, v in enumerate(values)])
            step_rows += n_steps * len(names)
            for epoch in range(EPOCHS):
                store.log_epoch(run_id, epoch, {"ndcg@1": rng.random(), "ndcg@3": rng.random(),
                                                "ndcg@5": rng.random(), "ndcg@10": rng.random(), "seconds": 1.0})
            pq = {f"q{fold}-{i}": float(v) for i, v in enumerate(rng.random(QUERIES))}
            store.finish_run(run_id, test_means={f"ndcg@{k}": float(np.mean(list(pq.values()))) for k in (1, 3, 5, 10)},
                             per_query={f"ndcg@{k}": pq for k in (1, 3, 5, 10)}, train_seconds=float(rng.uniform(30, 600)),
                             pretrain_seconds=300.0 if loss == "neuralloss" else None, best_epoch=EPOCHS - 1)
    return step_rows


def render_seconds(page: str | None, repeats: int) -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest

    def once() -> float:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        start = time.perf_counter()
        if page is not None:
            at.switch_page(page).run()
        else:
            at.run()
        elapsed = time.perf_counter() - start
        if at.exception:
            raise RuntimeError(f"{page}: {[e.value for e in at.exception]}")
        return elapsed

    first = once()
    return first, statistics.median(once() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="irdash-bench-") as tmp:
        os.environ["IRDASH_CACHE_DIR"] = tmp
        start = time.perf_counter()
        step_rows = seed_store(Path(tmp) / "runs.sqlite", args.runs)
        size_mb = (Path(tmp) / "runs.sqlite").stat().st_size / 2**20
        print(f"seeded {args.runs} runs, {step_rows:,} step-metric rows, {args.runs * EPOCHS * 5:,} epoch-metric "
              f"rows, {args.runs * QUERIES * 4:,} per-query rows ({size_mb:.0f} MiB) in "
              f"{time.perf_counter() - start:.1f} s")
        for name, page in (("home", None), ("training", "pages/training.py"), ("results", "pages/results.py")):
            first, median = render_seconds(page, args.repeats)
            verdict = "ok" if median < 2.0 else "SLOW (target < 2 s)"
            print(f"page {name:<9} first render {first:6.3f} s   median of {args.repeats}: {median:6.3f} s   {verdict}")


if __name__ == "__main__":
    main()
