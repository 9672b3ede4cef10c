"""Where do LearnDCG's parameters go? The study's variant, the identifiable one and ApproxNDCG, per fold.

    python bench/learndcg_identifiability.py [--store cache/identifiability.sqlite] [--epochs 25]

Trains, on 5 folds of each data set (every run in one process, sequentially, ``torch`` on
``--threads`` threads), the arms

- ``approxndcg``                     b_g = b_d = 2, alpha = 1 (the reference)
- ``learndcg``                       the study's variant: theta minimise the training loss (standard ideal)
- ``learndcg_meta``                  theta learned by the validation-NDCG@10 hypergradient
- ``learndcg_meta learnable=False``  fixed discount powers p (``--fixed-p``): the ground truth of which
                                     shape the data reward (synthetic only)

on ``synthetic-mq2007:n_queries=500,conflict=1`` (planted top/body trade-off, ``ltr.data.synthetic``;
the fixed-p arms measure which discount shape it rewards: a flatter one, p = 0.5) and on
the real MQ2008 sample (``../shared/data/letor/mq2008_fold1_test.txt``: its 156 queries split into 5
parts by query at random, seed 0, Fold k trains on three parts, validates on the next, tests on the
last, as LETOR rotates). Then prints, per data set: per fold the training steps, the final theta_d /
theta_g (and b_d or p), test NDCG@10 (exp gain, queries without relevant documents = 1); the means;
the slope of final theta_d against steps; and paired t-tests over the pooled test queries.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from scipy import stats  # noqa: E402

from core.paths import cache_subdir  # noqa: E402
from ltr.store import RunStore, ndcg_per_query  # noqa: E402
from ltr.train import RunConfig, train_run  # noqa: E402

MQ2008_SAMPLE = ROOT.parent / "shared" / "data" / "letor" / "mq2008_fold1_test.txt"
SYNTHETIC = "synthetic-mq2007:n_queries=500,conflict=1"


def mq2008_folds(source: Path = MQ2008_SAMPLE, n_folds: int = 5, seed: int = 0) -> Path:
    """``cache/letor_folds/mq2008-sample/FoldK/{train,vali,test}.txt`` split by query (written once)."""
    out = cache_subdir("letor_folds") / "mq2008-sample"
    if (out / f"Fold{n_folds}" / "test.txt").is_file():
        return out
    blocks: dict[str, list[str]] = {}
    for line in source.read_text().splitlines(keepends=True):
        qid = line.split()[1]
        blocks.setdefault(qid, []).append(line)
    qids = list(blocks)
    parts = np.array_split(np.random.default_rng(seed).permutation(len(qids)), n_folds)
    text = ["".join("".join(blocks[qids[i]]) for i in sorted(p)) for p in parts]
    for k in range(n_folds):
        order = [(k + j) % n_folds for j in range(n_folds)]
        fold = out / f"Fold{k + 1}"
        fold.mkdir(parents=True, exist_ok=True)
        (fold / "train.txt").write_text("".join(text[i] for i in order[:3]))
        (fold / "vali.txt").write_text(text[order[3]])
        (fold / "test.txt").write_text(text[order[4]])
    return out


def arms(fixed_p: list[float], synthetic: bool) -> list[tuple[str, str, dict]]:
    out = [("approxndcg", "approxndcg", {}), ("learndcg", "learndcg", {}), ("learndcg_meta", "learndcg_meta", {})]
    if synthetic:
        out += [(f"fixed p={p:g}", "learndcg_meta", {"p_d": p, "learnable": False}) for p in fixed_p]
    return out


def final_parameters(store: RunStore, run_id: str) -> dict:
    names = [n for n in store.step_metric_names(run_id) if n != "loss"]
    if not names:
        return {}
    series = store.step_series([run_id], names, max_points=10**9)
    last = series.sort_values("step").groupby("name").last()
    out = {name: float(last.loc[name, "value"]) for name in last.index}
    grads = series[series["name"] == "grad_theta_d"]["value"].to_numpy()
    if grads.size:
        nonzero = grads[grads != 0]
        out["one_sign_share"] = float(max((nonzero > 0).mean(), (nonzero < 0).mean())) if nonzero.size else 1.0
    return out


def run_all(data: str, store: RunStore, args, synthetic: bool) -> list[dict]:
    rows = []
    for label, loss, params in arms(args.fixed_p, synthetic):
        for fold in range(1, 6):
            cfg = RunConfig(data=data, fold=fold, loss=loss, model="mlp", epochs=args.epochs, lr=args.lr,
                            loss_lr=args.loss_lr, batch_size=args.batch_size, patience=args.patience,
                            loss_params=params, experiment="identifiability", device="cpu")
            result = train_run(cfg, store)
            run = store.get_run(result.run_id)
            steps = store.step_series([result.run_id], ["loss"], max_points=10**9)["step"].max() + 1
            rows.append({"data": data, "arm": label, "fold": fold, "run_id": result.run_id, "steps": int(steps),
                         "ndcg@10": run["test_ndcg10"], **final_parameters(store, result.run_id)})
            print(f"{label:<16} fold {fold} steps {int(steps):>4} ndcg@10 {run['test_ndcg10']:.4f}", flush=True)
    return rows


def paired(store: RunStore, rows: list[dict], a: str, b: str) -> tuple[float, float, int]:
    def pooled(arm):
        values = {}
        for r in rows:
            if r["arm"] == arm:
                pq = ndcg_per_query(store, [r["run_id"]], 10)
                values.update({(r["fold"], q): v for q, v in zip(pq["qid"], pq["value"])})
        return values
    va, vb = pooled(a), pooled(b)
    keys = sorted(set(va) & set(vb))
    x, y = np.array([va[k] for k in keys]), np.array([vb[k] for k in keys])
    p = float(stats.ttest_rel(x, y).pvalue) if not np.allclose(x, y) else 1.0
    return float(np.mean(x - y)), p, len(keys)


def print_table(store: RunStore, rows: list[dict]) -> None:
    import pandas as pd

    frame = pd.DataFrame(rows)
    cols = [c for c in ("steps", "theta_d", "theta_g", "b_d", "p_d", "b_g", "one_sign_share", "ndcg@10")
            if c in frame]
    for data, part in frame.groupby("data", sort=False):
        print(f"\n=== {data}  (mlp, NDCG@10 with gain=exp, no-relevant=1)")
        for arm, g in part.groupby("arm", sort=False):
            print(f"\n-- {arm}")
            shown = g[["fold", *cols]].dropna(axis=1, how="all")
            print(shown.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
            print(f"mean NDCG@10 {g['ndcg@10'].mean():.4f}", end="")
            if "theta_d" in g and g["theta_d"].notna().all() and g["steps"].nunique() > 1:
                fit = stats.linregress(g["steps"], g["theta_d"])
                print(f"; final theta_d vs steps: slope {fit.slope:.5f}/step, r = {fit.rvalue:.3f}", end="")
            print()
        print()
        arms_here = list(dict.fromkeys(part["arm"]))
        for a, b in [("learndcg_meta", "approxndcg"), ("learndcg", "approxndcg"), ("learndcg_meta", "learndcg")] + \
                [(x, "approxndcg") for x in arms_here if x.startswith("fixed")]:
            if a in arms_here and b in arms_here:
                diff, p, n = paired(store, part.to_dict("records"), a, b)
                print(f"paired t-test {a} - {b}: mean diff {diff:+.4f} over {n} queries, p = {p:.3g}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", default=str(cache_subdir("identifiability") / "runs.sqlite"))
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--patience", type=int, default=8)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--loss-lr", type=float, default=1e-2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--fixed-p", type=float, nargs="*", default=[0.5, 3.0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", choices=["synthetic", "mq2008"], default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    with RunStore(args.store) as store:
        if args.only in (None, "synthetic"):
            rows += run_all(SYNTHETIC, store, args, synthetic=True)
        if args.only in (None, "mq2008"):
            if MQ2008_SAMPLE.is_file():
                rows += run_all(str(mq2008_folds()), store, args, synthetic=False)
            else:
                print(f"skipping MQ2008: {MQ2008_SAMPLE} not found")
        print_table(store, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
