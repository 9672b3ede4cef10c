"""The LearnDCG paper's MQ2008 table at the paper's scale, run as a careful reviewer would want it (issue 34).

    python bench/learndcg_mq2008_reproduction.py --data ../shared/data/letor/MQ2008 --out RESULT.json \
        [--parts shared tuned rankers report] [--seeds 0 1 2] [--trials 30] [--startup-trials 10] \
        [--tune-folds 1 2 3 4 5] [--workers 2] [--store S] [--export-dir D] [--folds 1 2 3 4 5] [--epochs N] \
        [--merge OTHER_RESULT.json ...] [--readme README.md] [--guide docs/ltr-guide.md]
    python bench/learndcg_mq2008_reproduction.py --out bench/results/learndcg_mq2008_reproduction.json \
        --blocks-only [--data ../shared/data/letor/MQ2008] --readme README.md --guide docs/ltr-guide.md

Data: a standard LETOR folder (``Fold1..Fold5/{train,vali,test}.txt``), trained and reported under the data set
name ``mq2008`` (``IRDASH_DATA_MQ2008`` is set to ``--data`` for this process and its trainer hosts), so runs,
tables and exports name the data set, never a path. Its files' sha256 go into the result.

Parts (each skips what its store already holds, so a stopped reproduction resumes; ``--parts`` picks them):

* ``shared``: the study grid's shared hyper-parameters (``ltr/configs/study_grid.toml``'s ``[train]`` and
  ``[loss_params]``), its 11 losses with the MLP and LambdaMART (LightGBM ``lambdarank``, early stopping on
  validation NDCG@10), 5 folds x ``--seeds``; experiment ``mq2008-repro-shared``.
* ``tuned``: per fold, ``ltr tune`` of each loss and of LambdaMART on that fold's validation NDCG@10 (Optuna TPE,
  ``--trials`` trials of which ``--startup-trials`` random, each study its own sampler seed, median pruning on the
  per-epoch validation metric, ``--workers`` studies at a time; LambdaMART over num_leaves, learning_rate,
  min_data_in_leaf, feature and bagging fractions with up to 1,000 trees and patience 50; the study of a fold
  never sees its test file), then the fold's runs with its tuned settings x ``--tuned-seeds`` (1, 2, 3: not the
  trials' seed 0, whose best run is the tuning's own); experiment ``mq2008-repro-tuned``. ``--tune-folds 1``
  tunes Fold1 only and applies its settings to every fold (``settings.tuned_on`` says which).
* ``rankers``: the other three rankers (AttSets, Attention-MIL, Context-Aware) with the 11 losses at the shared
  settings, 5 folds x ``--ranker-seeds``; experiment ``mq2008-repro-rankers``. ``--rankers`` narrows them.
* ``report``: per experiment and ranker the significance table (paired t-test over test queries on per-query
  NDCG averaged over seeds, Holm across baselines), the tests with the seeds as a random effect (fold-level test,
  hierarchical bootstrap over queries and seeds: ``ltr.report.seeds``) and the top group, ``ltr findings`` and
  ``ltr export``; every compared run's per-query NDCG@1,3,5,10 goes to the archive beside ``--out``
  (``RESULT_per_query.csv.gz``, ``ltr.report.archive``), from which every p-value is recomputed.

``--folds`` and ``--epochs`` shrink every training part (the folds trained and tuned; the neural runs' epoch
limit, the grid's 100 otherwise) for a smoke run of the whole script; the reproduction leaves them at the paper's
values, and the result records them (``settings.folds``, ``settings.train.epochs``).

A training part is run only from a clean checkout (exit 2 otherwise; ``bench/results``, where the result is written
after each part, is output and does not count: ``core.export.git_state``), and stored only when every run of its
experiment was trained by committed code (``ltr.store``'s per-run ``code_commit`` / ``code_dirty``, recorded
under the part's ``code``); otherwise the script stops with exit 1 and names the part.

Writes ``--out``: provenance (data files and sha256, commit, settings, machine, load), each part's wall and CPU
seconds (this process and its finished children), the tables, the findings and the paper's figures beside them
(read from ``ltr/paper_claims.json``). Every figure is read from the store, the report or the findings; none is
typed here. ``--readme`` and ``--guide`` rewrite the generated tables of the README (the headline: the MLP at the
shared settings) and of the LearnDCG guide (tuned, other rankers) from ``--out`` (``ltr.paper_table``);
``--blocks-only`` does only that, from ``--out`` as stored, running no part and needing no ``--data``; given
``--data`` (the files ``--out`` names, checked by sha256) it first records the test files' query counts (the queries
without a relevant document, said beside the paper's figure).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA_NAME = "mq2008"
STUDY_GRID = ROOT / "ltr" / "configs" / "study_grid.toml"
FOLDS = [1, 2, 3, 4, 5]
LOSSES = ["ranknet", "listnet", "listmle", "rmse", "lambdarank", "lambdaloss", "approxndcg", "neuralndcg",
          "neuralloss", "learndcg", "learndcg_fixed"]
TUNED_LOSSES = [loss for loss in LOSSES if loss != "learndcg_fixed"]  # learndcg_fixed at defaults = approxndcg
OTHER_RANKERS = ["attsets", "attention_mil", "context_aware"]
EXPERIMENTS = {"shared": "mq2008-repro-shared", "tuned": "mq2008-repro-tuned", "rankers": "mq2008-repro-rankers"}
PARTS = ("shared", "tuned", "rankers", "report")
KS = (1, 3, 5, 10)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (trainer hosts, LightGBM threads)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Timed:
    """Wall and CPU seconds of one part, with the load average before and after."""

    def __init__(self, record: dict, name: str):
        self.record, self.name = record, name

    def __enter__(self):
        self.wall0, self.cpu0, self.load0 = time.perf_counter(), cpu_seconds(), os.getloadavg()
        return self

    def __exit__(self, *exc):
        from core.export import git_state

        self.record[self.name] = {**git_state(), "wall_seconds": round(time.perf_counter() - self.wall0, 1),
                                  "cpu_seconds": round(cpu_seconds() - self.cpu0, 1),
                                  "load_1_5_15_before": [round(x, 2) for x in self.load0],
                                  "load_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
                                  "finished": exc[0] is None}
        return False


def base_spec(experiment: str, losses: list[str], models: list[str], seeds: list[int], folds: list[int],
              epochs: int | None = None) -> dict:
    """The study grid's spec for one experiment; ``epochs`` (a smoke run's, ``--epochs``) replaces the grid's."""
    from ltr.grid import read_grid_file

    spec = read_grid_file(STUDY_GRID)
    if epochs is not None:
        spec["train"]["epochs"] = epochs
    spec.pop("overrides", None)  # WEB10K/Yahoo slates only
    spec.update({"name": experiment, "data": [DATA_NAME], "folds": folds, "losses": losses, "models": models,
                 "seeds": seeds})
    spec["loss_params"] = {k: v for k, v in spec.get("loss_params", {}).items() if k in losses}
    return spec


def run_spec(spec: dict, store: Path, workers: int, source: str) -> dict:
    from ltr.grid import expand_grid, run_grid, validate_grid

    grid = expand_grid(spec, source=source)
    validate_grid(grid)
    outcome = run_grid(grid, store, workers=workers, progress=True)
    return {"runs": len(grid.configs), "completed": len(outcome.completed), "skipped": len(outcome.skipped),
            "failed": dict(outcome.failed)}


def tune_folds(folds: list[int], losses: list[str], trials: int, startup: int, workers: int, store: Path, spec: dict,
               tuned_dir: Path) -> dict:
    """Tune every loss and LambdaMART on each of ``folds``' validation set (``ltr.tune``: TPE past its ``startup``
    random trials, each study its own sampler seed, median pruning), ``workers`` studies at a time; the neural
    studies from the grid ``spec``'s epochs, patience and fixed loss parameters (LearnDCG's normalisation).
    Per fold: what ran, read from each study, and the tuned grid fragment (also written to ``tuned_dir``)."""
    from ltr.gbdt import GBDT_MODELS
    from ltr.train import RunConfig
    from ltr.tune import tune_studies, tuned_grid

    bases = [RunConfig.from_dict({"data": DATA_NAME, "fold": fold, "loss": loss, "model": "mlp", "seed": 0,
                                  "epochs": spec["train"]["epochs"], "patience": spec["train"]["patience"],
                                  "loss_params": dict(spec.get("loss_params", {}).get(loss, {}))})
             for fold in folds for loss in losses]
    bases += [RunConfig(data=DATA_NAME, fold=fold, loss=GBDT_MODELS["lambdamart"], model="lambdamart", seed=0)
              for fold in folds]
    results = tune_studies(bases, trials, workers=workers, store_path=store, n_startup_trials=startup)
    out = {}
    tuned_dir.mkdir(parents=True, exist_ok=True)
    for fold in folds:
        mine = [r for base, r in zip(bases, results) if base.fold == fold]
        document = {"fold": fold, "trials_asked": trials, "studies": [r.as_dict() for r in mine],
                    "trials_ran": {f"{r.loss}/{r.model}": r.n_trials for r in mine}, "grid": tuned_grid(mine)}
        (tuned_dir / f"tuned-fold{fold}.json").write_text(json.dumps(document, indent=1, default=str), encoding="utf-8")
        out[f"fold{fold}"] = document
    return out


def code_of_runs(store_path: Path, experiment: str) -> dict:
    """The code that trained an experiment's completed runs (``ltr.store``'s per-run commit and dirty flag)."""
    from ltr.store import RunStore

    with RunStore(store_path) as store:
        runs = store.list_runs(experiment=experiment, status="completed")
    if runs.empty:
        return {"runs": 0, "commits": [], "dirty_runs": 0, "unknown_code_runs": 0}
    commits = runs["code_commit"] if "code_commit" in runs else None
    dirty = runs["code_dirty"] if "code_dirty" in runs else None
    return {"runs": len(runs),
            "commits": sorted({str(c) for c in commits.dropna()}) if commits is not None else [],
            "dirty_runs": int((dirty.fillna(0) > 0).sum()) if dirty is not None else 0,
            "unknown_code_runs": int(commits.isna().sum()) if commits is not None else len(runs)}


def clean(value):
    """NaN -> None, recursively (JSON has no NaN)."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def seed_aware(frame, table) -> dict:
    """The table's tests with the seeds as a random effect (fold-level test, hierarchical bootstrap over queries and
    seeds: ltr.report.seeds) and its top group at NDCG@10 (the bootstrap of the best against each loss, Holm)."""
    from ltr.report.seeds import BOOTSTRAP_TEST, FOLD_TEST, bootstrap_test, run_means, seed_tests, table_mean, top_group

    candidate = table.attrs.get("candidate")
    tests = seed_tests(frame, candidate, KS) if candidate is not None else None
    runs = run_means(frame, 10)
    means = {v: table_mean(runs, v, 10) for v in dict.fromkeys(frame["variant"])}
    group = top_group(means, lambda best, other: bootstrap_test(frame, best, other, 10)["p"])
    return {"seed_tests": None if tests is None else clean(tests.to_dict("records")),
            "seed_tests_definitions": {"fold": FOLD_TEST, "bootstrap": BOOTSTRAP_TEST},
            "top_group": {**group, "k": 10, "test": BOOTSTRAP_TEST, "correction": "Holm across the best's comparisons"}}


def report_experiment(store_path: Path, experiment: str, export_root: Path) -> tuple[dict, list]:
    """Significance table per ranker (Holm), its seed-aware tests and top group, the findings and the export of one
    experiment; with the per-query archive rows of every table."""
    from ltr.export import export_comparison
    from ltr.findings import as_json, check_findings
    from ltr.report.archive import archive_rows
    from ltr.report.paired import configuration_runs, per_query_frame, significance_table
    from ltr.report.runs import ReportError
    from ltr.store import RunStore

    out, archived = {"tables": {}, "exports": {}}, []
    with RunStore(store_path) as store:
        runs = store.list_runs(experiment=experiment, status="completed")
        if runs.empty:
            return {"missing": f"no completed runs in {experiment}"}, []
        for model in sorted(set(runs["model"]) - {"lambdamart"}):
            try:
                table = significance_table(store, DATA_NAME, model, experiment=experiment, holm=True)
                chosen, configuration, _ = configuration_runs(store, DATA_NAME, model, experiment=experiment)
            except ReportError as exc:
                out["tables"][model] = {"error": str(exc)}
                continue
            frame = per_query_frame(store, chosen)
            archived.append(archive_rows(frame, experiment=experiment, model=model, configuration=configuration))
            out["tables"][model] = {"configuration": table.attrs.get("configuration"),
                                    "candidate": table.attrs.get("candidate"),
                                    "rows": clean(table.to_dict("records")), **seed_aware(frame, table)}
            folder = export_root / f"{experiment}-{model}"
            try:
                out["exports"][model] = {"folder": str(folder),
                                         "manifest": export_comparison(store, DATA_NAME, model, experiment,
                                                                       folder).manifest()}
            except Exception as exc:  # an export that cannot be made is reported, the rest goes on
                out["exports"][model] = {"error": f"{type(exc).__name__}: {exc}"}
        out["findings"] = clean(as_json(check_findings(store, experiment)))
        cols = ["run_id", "loss", "model", "fold", "seed", "epochs_done", "best_epoch", "train_seconds",
                "pretrain_seconds", "pretrain_paid", "pretrain_key", "cpu_seconds", "threads", "load_at_start", "test_ndcg1", "test_ndcg3",
                "test_ndcg5", "test_ndcg10"]
        out["runs"] = clean(runs[[c for c in cols if c in runs.columns]]
                            .sort_values(["model", "loss", "fold", "seed"]).to_dict("records"))
    return out, archived


def previous_record(out: Path, store: Path) -> dict:
    """The result stored at ``out`` when it was made from ``store`` (a stopped reproduction resumed, or one part rerun),
    else an empty record: a result of another store (the committed one, say) would otherwise lend the new result its
    parts, timings, report and archive entry, made by other runs and other code."""
    if not out.is_file():
        return {}
    record = json.loads(out.read_text(encoding="utf-8"))
    if record.get("store") == str(store):
        return record
    print(f"--out {out}: made from the store {record.get('store')!r}, not {str(store)!r}; starting a new result "
          "(nothing of the old one is kept)", file=sys.stderr)
    return {}


def archive_path(out: Path) -> Path:
    """The per-query archive beside the result: ``RESULT_per_query.csv.gz``."""
    return out.with_name(out.stem + "_per_query.csv.gz")


def test_queries(folder: Path) -> dict:
    """``{test_queries, no_relevant, per_fold}`` read from the LETOR test files: the pooled test queries and those
    without a relevant document (label > 0), which score 1 under every loss (the study's convention)."""
    import numpy as np

    from ltr.data.letor import read_letor

    per_fold, total, empty = {}, 0, 0
    for k in FOLDS:
        data = read_letor(folder / f"Fold{k}" / "test.txt")
        best = np.maximum.reduceat(data.labels, data.query_ptr[:-1]) if data.n_queries else np.zeros(0)
        missing = int(np.sum(best <= 0))
        per_fold[f"Fold{k}"] = {"queries": int(data.n_queries), "no_relevant": missing}
        total, empty = total + int(data.n_queries), empty + missing
    return {"test_queries": total, "no_relevant": empty, "per_fold": per_fold,
            "convention": "a query without a relevant document scores NDCG 1 (norel=1) under every loss"}


def write_blocks(record: dict, out: Path, readme: Path | None, guide: Path | None) -> None:
    """Rewrite the README's and the guide's generated blocks from ``record`` (stored at ``out``, which each block
    names by its path relative to the file holding it)."""
    from core.atomic import atomic_write_text
    from ltr.paper_table import GUIDE_BLOCK, README_BLOCK, markdown, sync_block

    for path, block in ((readme, README_BLOCK), (guide, GUIDE_BLOCK)):
        if path is None:
            continue
        source = os.path.relpath(out.resolve(), path.resolve().parent)
        atomic_write_text(path, sync_block(path.read_text(encoding="utf-8"), markdown(record, source, block), block))
        print(f"rewrote the reproduction block ({block.name}) of {path}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, help="LETOR folder with Fold1..Fold5 (required unless --blocks-only)")
    ap.add_argument("--out", required=True, type=Path, help="result JSON (written after every part)")
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--tuned-seeds", nargs="+", type=int, default=[1, 2, 3],
                    help="seeds of the tuned runs (default 1 2 3: not the tuning trials' seed 0, whose best run was "
                         "chosen by its study and is filed under the tuning's experiment, so a grid would skip it)")
    ap.add_argument("--ranker-seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--rankers", nargs="+", choices=OTHER_RANKERS, default=OTHER_RANKERS)
    ap.add_argument("--trials", type=int, default=None,
                    help="Optuna trials per loss (and LambdaMART) and fold (default ltr.tune.DEFAULT_TRIALS, 30)")
    ap.add_argument("--startup-trials", type=int, default=None,
                    help="TPE's random start-up trials (default ltr.tune.N_STARTUP_TRIALS, 10)")
    ap.add_argument("--folds", nargs="+", type=int, choices=FOLDS, default=FOLDS,
                    help="folds trained and tuned (default all five, the paper's; fewer only for a smoke run)")
    ap.add_argument("--epochs", type=int, default=None,
                    help="neural runs' epoch limit (default the study grid's, 100; fewer only for a smoke run)")
    ap.add_argument("--tune-folds", nargs="+", type=int, choices=FOLDS, default=None,
                    help="folds tuned on their own validation set (default every --folds); a fold not named takes "
                         "the first named fold's settings, and the result says so (settings.tuned_on)")
    ap.add_argument("--workers", type=int, default=2, help="trainer processes and tuning studies at once (default 2)")
    ap.add_argument("--threads", default="1", help="IRDASH_TORCH_THREADS of every trainer (default 1)")
    ap.add_argument("--store", type=Path, default=None, help="run store (default cache/bench/mq2008-repro.sqlite)")
    ap.add_argument("--export-dir", type=Path, default=None, help="exports (default cache/bench/mq2008-repro-export)")
    ap.add_argument("--readme", type=Path, default=None,
                    help="rewrite this Markdown file's headline reproduction block from --out (ltr.paper_table)")
    ap.add_argument("--guide", type=Path, default=None,
                    help="rewrite this Markdown file's block of the tuned and other-ranker tables from --out")
    ap.add_argument("--blocks-only", action="store_true",
                    help="run no part: rewrite the --readme / --guide blocks from --out as stored")
    ap.add_argument("--merge", nargs="+", type=Path, default=[],
                    help="result files of this script whose parts ran in other processes: their parts and timings "
                         "are taken into --out")
    args = ap.parse_args()
    if args.blocks_only:
        if not args.out.is_file():
            print(f"--out {args.out}: no stored result to write the blocks from", file=sys.stderr)
            return 2
        if not (args.readme or args.guide):
            print("--blocks-only: name --readme and/or --guide", file=sys.stderr)
            return 2
        record = json.loads(args.out.read_text(encoding="utf-8"))
        if args.data is not None:  # the test files' query counts, from the very files the result names
            stored = record.get("data", {}).get("files", {})
            differ = [name for name, digest in stored.items() if not (args.data / name).is_file()
                      or sha256(args.data / name) != digest]
            if not stored or differ:
                print(f"--data {args.data}: not the files --out was made from (sha256 differs or missing: "
                      f"{', '.join(differ[:3]) or 'the result names no files'})", file=sys.stderr)
                return 2
            record["data"]["queries"] = test_queries(args.data)
            args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        write_blocks(record, args.out, args.readme, args.guide)
        return 0
    if args.data is None:
        print("--data: required (a LETOR folder with Fold1..Fold5) unless --blocks-only", file=sys.stderr)
        return 2
    folds = [args.data / f"Fold{k}" for k in FOLDS]
    missing = [str(f / name) for f in folds for name in ("train.txt", "vali.txt", "test.txt") if not (f / name).is_file()]
    if missing:
        print(f"--data {args.data}: not a LETOR folder with Fold1..Fold5 (missing {', '.join(missing[:3])})",
              file=sys.stderr)
        return 2
    from core.export import git_state
    from ltr.tune import DEFAULT_TRIALS, N_STARTUP_TRIALS

    args.tune_folds = args.tune_folds or args.folds
    if not set(args.tune_folds) <= set(args.folds):
        print(f"--tune-folds {' '.join(map(str, args.tune_folds))}: not among --folds "
              f"{' '.join(map(str, args.folds))}", file=sys.stderr)
        return 2
    if args.epochs is not None and args.epochs < 1:
        print(f"--epochs {args.epochs}: must be at least 1", file=sys.stderr)
        return 2
    args.trials = args.trials or DEFAULT_TRIALS
    args.startup_trials = args.startup_trials or N_STARTUP_TRIALS
    if git_state()["dirty"]:
        print("the working tree has uncommitted changes: commit them first, so every part of the result names the "
              "code that made it (issue 41: a stored part was made from dirty code)", file=sys.stderr)
        return 2
    os.environ[f"IRDASH_DATA_{DATA_NAME.upper()}"] = str(args.data.resolve())  # inherited by the trainer hosts
    os.environ["IRDASH_TORCH_THREADS"] = args.threads

    from core.paths import cache_subdir
    from ltr.grid import read_grid_file

    store = args.store or cache_subdir("bench") / "mq2008-repro.sqlite"
    export_root = args.export_dir or cache_subdir("bench") / "mq2008-repro-export"
    record = previous_record(args.out, store)
    record.update({
        "what": "the LearnDCG paper's MQ2008 table at the paper's scale (bench/learndcg_mq2008_reproduction.py)",
        "data": {"name": DATA_NAME, "folder": str(args.data),
                 "files": {str(f.relative_to(args.data) / name): sha256(f / name)
                           for f in folds for name in ("train.txt", "vali.txt", "test.txt")},
                 "queries": test_queries(args.data)},
        "settings": {"grid_file": "ltr/configs/study_grid.toml",
                     "train": {**read_grid_file(STUDY_GRID)["train"],
                               **({} if args.epochs is None else {"epochs": args.epochs})},
                     "folds": args.folds,
                     "losses": LOSSES, "seeds": args.seeds, "tuned_seeds": args.tuned_seeds,
                     "ranker_seeds": args.ranker_seeds,
                     "rankers": args.rankers, "trials": args.trials, "startup_trials": args.startup_trials,
                     "tuned_on": {f"fold{k}": f"fold{k if k in args.tune_folds else args.tune_folds[0]}"
                                  for k in args.folds},
                     "workers": args.workers,
                     "torch_threads": args.threads, "experiments": EXPERIMENTS},
        "paper": json.loads((ROOT / "ltr" / "paper_claims.json").read_text(encoding="utf-8")),
        "machine": {"cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0))},
        **git_state(), "store": str(store),
    })
    record.setdefault("parts", {})
    record.setdefault("timing", {})
    for other in args.merge:  # parts run in parallel processes, each with its own result file
        done = json.loads(other.read_text(encoding="utf-8"))
        record["parts"].update(done.get("parts", {}))
        record["timing"].update(done.get("timing", {}))

    def runs_clean(part: str, experiment: str) -> bool:
        """Record which code trained the part's runs (the store's per-run commit); False, with the reason on
        stderr, when any of them was trained by code with uncommitted changes or by unrecorded code (a run the
        store held from before the per-run record): the part is then not stored."""
        code = code_of_runs(store, experiment)
        record["parts"][part]["code"] = code
        if code["dirty_runs"] or code["unknown_code_runs"]:
            print(f"part {part}: {code['dirty_runs']} run(s) trained by code with uncommitted changes and "
                  f"{code['unknown_code_runs']} by unrecorded code in {experiment}; not stored (retrain them from a "
                  f"clean checkout, or use a fresh --store)", file=sys.stderr)
            return False
        return True

    def save():
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")

    if "shared" in args.parts:
        with Timed(record["timing"], "shared"):
            spec = base_spec(EXPERIMENTS["shared"], LOSSES, ["mlp", "lambdamart"], args.seeds, args.folds, args.epochs)
            record["parts"]["shared"] = run_spec(spec, store, args.workers, "bench/learndcg_mq2008_reproduction.py")
        if not runs_clean("shared", EXPERIMENTS["shared"]):
            return 1
        save()
    if "tuned" in args.parts:
        from ltr.tune import apply_tuned

        tuned_dir = store.parent / "mq2008-repro-tuned"
        with Timed(record["timing"], "tune"):
            spec = base_spec(EXPERIMENTS["tuned"], TUNED_LOSSES, ["mlp"], args.seeds, args.folds, args.epochs)
            record["parts"]["tune"] = tune_folds(args.tune_folds, TUNED_LOSSES, args.trials, args.startup_trials,
                                                 args.workers, store, spec, tuned_dir)
        save()
        with Timed(record["timing"], "tuned"):
            outcomes = {}
            for k in args.folds:
                tuned_on = record["settings"]["tuned_on"][f"fold{k}"]
                spec = apply_tuned(base_spec(EXPERIMENTS["tuned"], TUNED_LOSSES, ["mlp", "lambdamart"],
                                             args.tuned_seeds, [k], args.epochs), record["parts"]["tune"][tuned_on])
                outcomes[f"fold{k}"] = run_spec(spec, store, args.workers, "bench/learndcg_mq2008_reproduction.py")
            record["parts"]["tuned"] = outcomes
        if not runs_clean("tuned", EXPERIMENTS["tuned"]):
            return 1
        save()
    if "rankers" in args.parts:
        with Timed(record["timing"], "rankers"):
            spec = base_spec(EXPERIMENTS["rankers"], LOSSES, args.rankers, args.ranker_seeds, args.folds, args.epochs)
            record["parts"]["rankers"] = run_spec(spec, store, args.workers, "bench/learndcg_mq2008_reproduction.py")
        if not runs_clean("rankers", EXPERIMENTS["rankers"]):
            return 1
        save()
    if "report" in args.parts:
        with Timed(record["timing"], "report"):
            done = {name: report_experiment(store, experiment, export_root) for name, experiment in EXPERIMENTS.items()}
            record["report"] = {name: part for name, (part, _) in done.items()}
            rows = [r for _, archived in done.values() for r in archived]
            if rows:
                import pandas as pd
                from ltr.report.archive import write_archive

                path = write_archive(pd.concat(rows, ignore_index=True), archive_path(args.out))
                record["archive"] = {"path": os.path.relpath(path, args.out.parent), "sha256": sha256(path),
                                     "rows": int(sum(len(r) for r in rows)),
                                     "what": "every compared run's per-query test NDCG@1,3,5,10 (ltr.report.archive)"}
        save()
    write_blocks(record, args.out, args.readme, args.guide)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
