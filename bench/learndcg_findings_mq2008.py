"""The LearnDCG findings (``python -m ltr findings``) and export (``python -m ltr export``) on real LETOR data.

    python bench/learndcg_findings_mq2008.py --out FILE.json [--data FILE.txt | --data FOLDER] [--folds 5] \
        [--split-seed 0] [--batch-size 16] [--epochs 100] [--losses ranknet listnet ...] \
        [--store cache/bench/learndcg-mq2008.sqlite] [--export-dir DIR]

Data (``--data``, default the shared MQ2008 sample ``../shared/data/letor/mq2008_fold1_test.txt``, LETOR 4.0
MQ2008 Fold1's test file: 156 queries): a LETOR file is cross-validated by query as ``ltr train --data
FILE.txt:folds=5,seed=0`` does (:mod:`ltr.data.crossval`: 5 parts at random, seed 0, Fold k trains on three
parts, validates on the next, tests on the last), so the runs and tables name the data by the file, never by
a cache folder; a folder of ``FoldK/`` (the full MQ2008 in ``../shared/data/letor/MQ2008``) is used as it is.
Grid: the study's settings (``ltr/configs/study_grid.toml``: its ``[train]`` and ``[loss_params]``) with the
MLP and the losses given (``--batch-size``, ``--epochs``, ``--patience`` override its ``[train]``: the study's
batch of 64 lists gives the sample's 94 training queries 2 steps an epoch, 16 gives 6, about what 64 gives
full MQ2008's ~470), trained by ``ltr.grid.run_grid`` with ``--workers`` trainer hosts (default 1) on one torch
thread each (``IRDASH_TORCH_THREADS``, default 1). Then the findings and the export of that experiment.

Writes ``--out`` (required: the tracked records in ``bench/results/`` are written only when named there):
the provenance (data file or folder and sha256 of each file read, the split, losses, folds, epochs, lr,
seed, commit), the machine's conditions (cores, load average before and after, each run's threads and load at
start, read from the run store), the per-loss mean test NDCG@k, the findings as ``ltr findings --json``
prints them, and the export's manifest. Every figure is read from the store or the findings, none typed here.

What this is not, on the sample: the paper's experiment. The paper trains on the full MQ2007/MQ2008/
MSLR-WEB10K/Yahoo folds; the sample's 5 test folds hold about 31 queries each (156 in all), so a verdict there
says what these few queries show, not whether the paper's claim holds at its scale. The output says so
(``scope_note``). NeuralLoss is not in the default losses: its surrogate pre-training alone ran past 10
CPU-minutes here.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MQ2008_SAMPLE = ROOT.parent / "shared" / "data" / "letor" / "mq2008_fold1_test.txt"
EXPERIMENT = "mq2008-sample-findings"
LOSSES = ["ranknet", "listnet", "listmle", "lambdaloss", "approxndcg", "neuralndcg", "learndcg"]
MODEL = "mlp"
STUDY_GRID = ROOT / "ltr" / "configs" / "study_grid.toml"
SCOPE_NOTE = ("A small real sample, not the paper's experiment: MQ2008 Fold1's test file alone (156 queries, "
              "about 31 test queries per fold), one ranker (MLP), one seed. The verdicts say what these queries "
              "show under this configuration; they do not confirm or refute the paper's claims at its scale "
              "(full MQ2007/MQ2008/MSLR-WEB10K/Yahoo folds, four rankers).")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def data_record(source: Path, data: str, folds: int, split_seed: int) -> dict:
    """What the runs were trained on: the file (and its split) or the folder, with the sha256 of each file read."""
    if source.is_file():
        return {"file": str(source), "sha256": sha256(source), "as_runs_name_it": data,
                "split": f"{source.name}'s queries split into {folds} parts by query at random (numpy "
                         f"default_rng({split_seed}) permutation); Fold k trains on the parts k..k+{folds - 3}, "
                         f"validates on the next, tests on the last (LETOR's rotation): ltr.data.crossval"}
    files = sorted(source.glob("Fold*/*.txt"))
    return {"folder": str(source), "as_runs_name_it": data,
            "sha256": {str(f.relative_to(source)): sha256(f) for f in files}, "split": "the folder's own FoldK/"}


def grid_spec(data: str, losses: list[str], train: dict, experiment: str, folds: list[int]) -> dict:
    from ltr.grid import read_grid_file

    spec = read_grid_file(STUDY_GRID)
    spec.pop("overrides", None)  # WEB10K/Yahoo slates only
    spec.update({"name": experiment, "data": [data], "folds": folds, "losses": losses, "models": [MODEL],
                 "seeds": [0]})
    spec["loss_params"] = {k: v for k, v in spec.get("loss_params", {}).items() if k in losses}
    spec["train"] = {**spec["train"], **{k: v for k, v in train.items() if v is not None}}
    return spec


def significance_rows(table) -> list[dict]:
    """The significance table the findings read (means over folds, differences, p and Holm p), NaN as None."""
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
            for row in table.to_dict("records")]


def run_conditions(store, experiment: str) -> list[dict]:
    runs = store.list_runs(experiment=experiment, status="completed")
    cols = ["run_id", "loss", "fold", "epochs_done", "best_epoch", "train_seconds", "cpu_seconds", "threads",
            "load_at_start", "test_ndcg10"]
    return [{c: (None if r[c] != r[c] else r[c]) for c in cols}  # NaN -> None
            for r in runs.sort_values(["loss", "fold"]).to_dict("records")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(MQ2008_SAMPLE),
                    help="a LETOR file (cross-validated by query) or a folder of FoldK/ (default: the shared sample)")
    ap.add_argument("--folds", type=int, default=5, help="folds of a LETOR file's split (default 5)")
    ap.add_argument("--split-seed", type=int, default=0, help="seed of a LETOR file's split (default 0)")
    ap.add_argument("--losses", nargs="+", default=LOSSES)
    ap.add_argument("--epochs", type=int, default=None, help="maximum epochs (default: the study grid's)")
    ap.add_argument("--batch-size", type=int, default=None, help="lists per batch (default: the study grid's)")
    ap.add_argument("--patience", type=int, default=None, help="early-stopping patience (default: the study grid's)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", default="1", help="IRDASH_TORCH_THREADS of every trainer host (default 1)")
    ap.add_argument("--store", default=None, help="run store (default cache/bench/learndcg-mq2008.sqlite)")
    ap.add_argument("--export-dir", default=None, help="export folder (default cache/bench/learndcg-mq2008-export)")
    ap.add_argument("--experiment", default=None,
                    help=f"experiment name (default {EXPERIMENT}[-batchB] for the sample, else the data's name)")
    ap.add_argument("--out", required=True,
                    help="result file (the tracked records are bench/results/learndcg_findings_mq2008[_batchB].json)")
    args = ap.parse_args()
    suffix = f"_batch{args.batch_size}" if args.batch_size is not None else ""
    source = Path(args.data).expanduser().resolve()
    if not source.exists():
        print(f"--data {args.data}: no such file or folder", file=sys.stderr)
        return 2
    sample = source == MQ2008_SAMPLE.resolve()
    experiment = args.experiment or ((EXPERIMENT if sample else f"{source.stem}-findings") + suffix.replace("_", "-"))
    out = Path(args.out)
    os.environ["IRDASH_TORCH_THREADS"] = args.threads  # inherited by the trainer hosts

    from core.export import git_state
    from core.paths import cache_subdir
    from ltr.export import export_comparison
    from ltr.findings import as_json, check_findings
    from ltr.grid import expand_grid, run_grid, validate_grid
    from ltr.report.paired import significance_table
    from ltr.store import RunStore

    store_path = Path(args.store) if args.store else cache_subdir("bench") / "learndcg-mq2008.sqlite"
    export_dir = Path(args.export_dir) if args.export_dir else cache_subdir("bench") / f"{experiment}-export"
    from ltr.store import canonical_data

    data = canonical_data(f"{source}:folds={args.folds},seed={args.split_seed}" if source.is_file() else str(source))
    from ltr.data.datasets import resolve_dataset

    folds = list(range(1, resolve_dataset(data)[0].n_folds + 1))
    spec = grid_spec(data, args.losses, {"epochs": args.epochs, "batch_size": args.batch_size,
                                           "patience": args.patience}, experiment, folds)
    grid = expand_grid(spec, source="bench/learndcg_findings_mq2008.py")
    validate_grid(grid)
    load_before, started, wall0 = os.getloadavg(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.perf_counter()
    outcome = run_grid(grid, store_path, workers=args.workers, progress=True)
    grid_wall = time.perf_counter() - wall0
    load_after = os.getloadavg()
    with RunStore(store_path) as store:
        result = as_json(check_findings(store, experiment))
        table = significance_table(store, data, MODEL, experiment=experiment, holm=True)
        export = export_comparison(store, data, MODEL, experiment, export_dir)
        runs = run_conditions(store, experiment)
    record = {
        "what": "the LearnDCG findings and export on a real LETOR sample (bench/learndcg_findings_mq2008.py)",
        "scope_note": SCOPE_NOTE if sample else None,
        "data": data_record(source, data, args.folds, args.split_seed),
        "experiment": experiment, "model": MODEL, "losses": list(args.losses), "folds": folds, "seeds": [0],
        "train": spec["train"], "loss_params": spec["loss_params"], "grid_settings_from": "ltr/configs/study_grid.toml",
        **git_state(), "started": started, "cores": os.cpu_count(), "workers": args.workers,
        "torch_threads_env": args.threads, "load_1_5_15_before": list(load_before),
        "load_1_5_15_after": list(load_after), "grid_wall_seconds": grid_wall,
        "grid_outcome": {"completed": len(outcome.completed), "skipped": len(outcome.skipped),
                         "failed": dict(outcome.failed)},
        "runs": runs, "significance": {"candidate": table.attrs.get("candidate"),
                                       "configuration": table.attrs.get("configuration"),
                                       "rows": significance_rows(table)},
        "verdicts": {name: {"verdict": f["verdict"], "reason": f["reason"]} for name, f in result["findings"].items()},
        "findings": result,
        "export": {"folder": str(export_dir), "manifest": export.manifest()},
    }
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    if sample:
        print(SCOPE_NOTE)
    for name, v in record["verdicts"].items():
        print(f"{name}: {v['verdict']} — {v['reason']}")
    for row in record["significance"]["rows"]:
        print(f"  {row['loss']:34s} " + " ".join(f"NDCG@{k} {row[f'ndcg@{k}']:.4f}" for k in (1, 3, 5, 10))
              + ("" if row.get("p_holm@10") is None else f"  p_holm@10 {row['p_holm@10']:.3g}"))
    print(f"grid {grid_wall:.0f} s wall, load {load_before[0]:.2f} -> {load_after[0]:.2f}; wrote {out}")
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
