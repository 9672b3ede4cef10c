"""LambdaMART on MQ2008 chosen from a small fixed grid, beside the reproduction's TPE-tuned LambdaMART (issue 41).

    python bench/lambdamart_grid_selection.py --data ../shared/data/letor/MQ2008 \
        --out bench/results/lambdamart_grid_selection.json [--seeds 0]

The review of the MQ2008 reproduction reported test NDCG@10 78.74 for LambdaMART chosen among 8 LightGBM
configurations per fold on validation NDCG@10, above the reproduction's TPE-tuned LambdaMART (the LearnDCG guide's
tuned table). This script runs such a selection so the two can be read side by side: per fold and seed, LightGBM
``lambdarank`` with each of ``GRID`` (num_leaves x learning_rate, LightGBM's defaults otherwise, bagging off),
boosted by the reproduction's own ``ltr.gbdt.lambdamart.train_booster`` (its LightGBM parameters; up to 1,000
trees, the round kept by validation NDCG@10, stopped 50 rounds after it); the configuration with the best
validation NDCG@10 is kept and its trees up to that round are tested by the project's evaluation
(``ltr.train.loop.evaluate`` on ``ltr.gbdt.lambdamart.BoosterRanker``: the study's NDCG convention, norel=1). The
result holds every configuration's validation and test figures, the chosen ones, and the mean over folds of the
chosen configurations' test NDCG@10 (per seed and over seeds), with the test figure of each fold's best
configuration *on test* beside it: how much a selection on about 157 validation queries leaves on the table.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GRID = [{"num_leaves": leaves, "learning_rate": rate}
        for leaves, rate in itertools.product((15, 31, 63, 127), (0.05, 0.1))]
MOST_TREES, PATIENCE = 1000, 50


def fold_runs(fold: int, seed: int, threads: int) -> list[dict]:
    """Every configuration of ``GRID`` on ``fold``, boosted as a reproduction run boosts (``train_booster``: its
    parameters, rounds kept by validation NDCG@10, patience): validation NDCG@10 at the round kept and the test
    NDCG@10 of the trees up to it."""
    import torch

    from ltr.data.datasets import load_fold
    from ltr.gbdt.lambdamart import BoosterRanker, train_booster
    from ltr.train import RunConfig
    from ltr.train.loop import EVAL_BATCH_SIZE, evaluate, make_batcher
    from ltr.train.run import SELECTION_METRIC

    splits = {split: load_fold("mq2008", fold, split) for split in ("train", "vali", "test")}
    rows = []
    for params in GRID:
        config = RunConfig(data="mq2008", fold=fold, loss="lambdamart", model="lambdamart", epochs=MOST_TREES,
                           patience=PATIENCE, seed=seed, model_params=dict(params))
        vali: dict[int, float] = {}
        boosted = train_booster(splits, config, threads, selection=SELECTION_METRIC,
                                log_round=lambda k, metrics: vali.__setitem__(k, metrics[SELECTION_METRIC]),
                                progress=lambda _line: None, check_cancel=lambda: None)
        test = splits["test"]
        with torch.no_grad():
            per_query = evaluate(BoosterRanker(boosted.booster, boosted.best_round + 1),
                                 make_batcher(test, torch.device("cpu"), EVAL_BATCH_SIZE), test.n_queries, ks=(10,))
        rows.append({"fold": fold, "seed": seed, **params, "trees": boosted.best_round + 1,
                     "vali_ndcg10": vali[boosted.best_round], "test_ndcg10": float(per_query[0].mean())})
    return rows


def summarise(rows: list[dict], seeds: list[int]) -> dict:
    import numpy as np

    chosen, best_on_test = [], []
    for seed in seeds:
        for fold in sorted({r["fold"] for r in rows}):
            mine = [r for r in rows if r["fold"] == fold and r["seed"] == seed]
            chosen.append(max(mine, key=lambda r: r["vali_ndcg10"]))  # ties: the first in GRID order
            best_on_test.append(max(mine, key=lambda r: r["test_ndcg10"]))
    per_seed = {seed: float(np.mean([r["test_ndcg10"] for r in chosen if r["seed"] == seed])) for seed in seeds}
    return {"chosen": chosen, "chosen_test_ndcg10_per_seed": per_seed,
            "chosen_test_ndcg10": float(np.mean(list(per_seed.values()))),
            "best_on_test_ndcg10": float(np.mean([r["test_ndcg10"] for r in best_on_test])),
            "grid_test_ndcg10_range_per_fold": {
                str(fold): [min(r["test_ndcg10"] for r in rows if r["fold"] == fold),
                            max(r["test_ndcg10"] for r in rows if r["fold"] == fold)]
                for fold in sorted({r["fold"] for r in rows})}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="a LETOR MQ2008 folder (Fold1..Fold5)")
    parser.add_argument("--out", required=True, type=Path)
    # bagging is off and LightGBM runs deterministic: another seed gives the same trees, so one is the default
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args(argv)
    if not all((args.data / f"Fold{f}" / "test.txt").is_file() for f in range(1, 6)):
        parser.error(f"--data {args.data}: expected Fold1..Fold5 with train/vali/test.txt")
    os.environ["IRDASH_DATA_MQ2008"] = str(args.data.resolve())
    import lightgbm

    started, cpu = time.perf_counter(), time.process_time()
    rows = [r for seed in args.seeds for fold in range(1, 6) for r in fold_runs(fold, seed, args.threads)]
    result = {"what": "LambdaMART on MQ2008 chosen per fold from a fixed grid on validation NDCG@10 (issue 41)",
              "data": {name: hashlib.sha256((args.data / name).read_bytes()).hexdigest()
                       for name in (f"Fold{f}/{s}.txt" for f in range(1, 6) for s in ("train", "vali", "test"))},
              "lightgbm": lightgbm.__version__, "grid": GRID, "most_trees": MOST_TREES, "patience": PATIENCE,
              "seeds": args.seeds, "convention": "test NDCG@10 by ltr.train.loop.evaluate (gain 2^y-1, norel=1)",
              "runs": rows, **summarise(rows, args.seeds),
              "wall_seconds": time.perf_counter() - started, "cpu_seconds": time.process_time() - cpu}
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"chosen on validation: test NDCG@10 {100 * result['chosen_test_ndcg10']:.2f} (per seed "
          + ", ".join(f"{100 * v:.2f}" for v in result["chosen_test_ndcg10_per_seed"].values())
          + f"); best of the grid on test: {100 * result['best_on_test_ndcg10']:.2f}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
