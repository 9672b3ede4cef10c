"""``python -m ltr``: ``train`` one run, run a ``grid``, print/export the ``report``, list ``runs``;
``worker`` is the host process that trains many runs (:mod:`ltr.train.host`).

Bad input (unknown names, missing or malformed data, a config clash with a stored run) prints one
``error: ...`` line on stderr and exits with status 2, having written nothing to the store.
A run that fails while training exits 1 (the store marks it failed with its error); a cancelled
one (SIGTERM, Ctrl-C) exits 130.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from core import fields
from core.atomic import atomic_write_text

EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CANCELLED = 1, 2, 130


class CliError(Exception):
    """Reported as ``error: <message>`` and exit status 2."""


def parse_param(text: str) -> tuple[str, object]:
    """``key=value`` with the value read as JSON when it parses (numbers, true/false, lists), else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


# the same rules as the Training form's fields (ltr.views.training_jobs.TRAINING_FIELDS)
_positive_int = fields.POSITIVE_INT.argparse_type()
_positive_float = fields.POSITIVE_FLOAT.argparse_type()
_zero_or_positive_int = fields.ZERO_OR_POSITIVE_INT.argparse_type()
_seed = fields.SEED.argparse_type()


def _add_hyper_parameters(p: argparse.ArgumentParser, *, grid: bool) -> None:
    """Training flags shared by ``train`` and ``grid`` (in ``grid`` they override the file)."""
    default = None if grid else argparse.SUPPRESS
    p.add_argument("--epochs", type=_positive_int, default=default, help="maximum epochs (default 50)")
    p.add_argument("--lr", type=_positive_float, default=default, help="Adam learning rate of the ranker (default 1e-3)")
    p.add_argument("--loss-lr", type=_positive_float, default=default, help="learning rate of the loss parameters (default: --lr)")
    p.add_argument("--batch-size", type=_positive_int, default=default, help="lists per batch (default 64)")
    p.add_argument("--slate-length", type=_zero_or_positive_int, default=default,
                   help="training lists longer than this are sub-sampled (default: whole lists)")
    p.add_argument("--patience", type=fields.NONNEGATIVE_INT.argparse_type(), default=default,
                   help="stop after this many epochs without validation NDCG@10 gain; 0 = never (default 10)")
    p.add_argument("--log-every", type=_positive_int, default=default, help="record step metrics every N steps (default 1)")
    p.add_argument("--flush-every", type=_positive_int, default=default,
                   help="write logged steps to the store every N logged steps (default 512; also every 10 s)")
    if grid:
        return  # per-loss / per-model parameters of a grid go in its file ([loss_params.<name>])
    p.add_argument("--loss-param", type=parse_param, action="append", default=[], metavar="K=V",
                   help="loss keyword argument (repeatable), value as JSON, e.g. normalisation=learned")
    p.add_argument("--model-param", type=parse_param, action="append", default=[], metavar="K=V",
                   help="ranker keyword argument (repeatable), e.g. hidden=[256,128]")


def _add_executor_flags(p: argparse.ArgumentParser) -> None:
    """Where runs execute: this machine (``local``) or Ray tasks (``ray``); unset flags come from
    ``irdash.toml`` ``[ray]`` (see :mod:`core.ray_cluster`)."""
    x = p.add_argument_group("executor")
    x.add_argument("--executor", choices=("local", "ray"), default=None,
                   help="local processes (default) or Ray tasks")
    x.add_argument("--address", default=None,
                   help="Ray cluster: auto, host:port or ray://host:10001 (default: start a local Ray instance)")
    x.add_argument("--cpus-per-run", type=float, default=None, help="CPUs a CPU run asks Ray for (default 1)")
    x.add_argument("--gpus-per-run", type=float, default=None, help="GPUs a CUDA run asks Ray for (default 1)")
    x.add_argument("--max-retries", type=int, default=None,
                   help="retries of a run whose Ray worker or node was lost (default 3)")
    x.add_argument("--checkpoint-dir", default=None,
                   help="shared checkpoint location for Ray runs: a path or fsspec URL (default: beside the store)")


def _ray_settings(args):
    """The ``[ray]`` settings with this command's flags applied; None for the local executor."""
    from core.ray_cluster import ray_settings

    settings = ray_settings().with_overrides(executor=args.executor, address=args.address,
                                             cpus_per_run=args.cpus_per_run, gpus_per_run=args.gpus_per_run,
                                             max_retries=args.max_retries, checkpoint_dir=args.checkpoint_dir)
    return settings if settings.executor == "ray" else None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ltr", description="LearnDCG study: training runs, grids, reports.")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train (or resume) one run and record it in the run store")
    t.add_argument("--data", required=True, help="data set name (synthetic-mq2008, mq2008, ...) or a folder of FoldK/")
    t.add_argument("--fold", required=True, type=int)
    t.add_argument("--loss", required=True)
    t.add_argument("--model", required=True)
    t.add_argument("--seed", type=_seed, default=argparse.SUPPRESS)
    _add_hyper_parameters(t, grid=False)
    t.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda when available)")
    t.add_argument("--experiment", default=None, help="experiment name recorded with the run")
    t.add_argument("--store", default=None, help="run store (default cache/runs.sqlite)")
    t.add_argument("--out", default=None, help="write the run's results as JSON to this file")
    t.add_argument("--force", action="store_true", help="retrain even if the run completed (replaces it)")
    t.add_argument("--no-resume", action="store_true", help="ignore a checkpoint and start over")
    t.add_argument("--quiet", action="store_true", help="no per-epoch progress on stderr")
    _add_executor_flags(t)

    g = sub.add_parser("grid", help="run a grid of runs, skipping those already completed")
    g.add_argument("--config", help="grid file (.toml, .yaml); flags below override its lists and [train]")
    g.add_argument("--name", help="experiment name (default: the file's name key, else its file name)")
    g.add_argument("--data", nargs="+")
    g.add_argument("--folds", nargs="+", type=int)
    g.add_argument("--losses", nargs="+")
    g.add_argument("--models", nargs="+")
    g.add_argument("--seeds", nargs="+", type=int)
    _add_hyper_parameters(g, grid=True)
    g.add_argument("--workers", type=_positive_int, default=1, help="runs at once (default 1)")
    g.add_argument("--devices", nargs="+", help="device per worker slot, round-robin (default: every GPU, else cpu)")
    g.add_argument("--store", default=None)
    g.add_argument("--force", action="store_true", help="retrain completed runs too")
    g.add_argument("--dry-run", action="store_true", help="list the runs to do and exit")
    g.add_argument("--no-progress", action="store_true")
    _add_executor_flags(g)

    r = sub.add_parser("report", help="cross-validation table with paired t-tests against the candidate loss")
    r.add_argument("--data", nargs="+", required=True)
    r.add_argument("--model", nargs="+", default=None, help="rankers (default: every ranker with runs)")
    r.add_argument("--store", default=None)
    r.add_argument("--experiment", default=None)
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--candidate", default="learndcg", help="the loss tested against every other (default learndcg)")
    r.add_argument("--alpha", type=float, default=0.05)
    r.add_argument("--holm", action="store_true", help="Holm-correct p-values across baselines")
    r.add_argument("--csv", default=None, help="write the full table (means, p-values) as CSV")
    r.add_argument("--latex", default=None, help="write LaTeX tables")
    r.add_argument("--json", action="store_true", help="print the table as JSON records instead of text")
    r.add_argument("--configuration", default=None,
                   help="compare the runs of this configuration (a label as --list-configurations prints it; "
                        "default: the configuration with the most completed runs); folds of different "
                        "configurations are never paired")
    r.add_argument("--list-configurations", action="store_true",
                   help="list the configurations (shared settings) with their losses and folds, and exit")
    r.add_argument("--exclude-no-relevant", action="store_true",
                   help="leave test queries without a relevant document out of the t-tests (they score 1 under "
                        "every loss by convention); the count is printed")

    w = sub.add_parser("worker", help="host process: train the run requests read on stdin (JSON lines) in this "
                                      "process (used by the grid and the dashboard's job runner)")
    w.add_argument("--idle-exit", type=float, default=None,
                   help="seconds without a request before exiting (default 300)")

    ls = sub.add_parser("runs", help="list runs in the store (read only: a run whose process died shows as \"running (dead)\")")
    ls.add_argument("--store", default=None)
    ls.add_argument("--status", nargs="+")
    ls.add_argument("--data", nargs="+")
    ls.add_argument("--experiment", default=None)
    return parser


def config_from_args(args: argparse.Namespace):
    from ltr.train import RunConfig

    values = {k: getattr(args, k) for k in ("data", "fold", "loss", "model", "seed", "epochs", "lr", "loss_lr",
                                            "batch_size", "slate_length", "patience", "log_every", "flush_every", "device",
                                            "experiment") if getattr(args, k, None) is not None}
    values["loss_params"] = dict(args.loss_param)
    values["model_params"] = dict(args.model_param)
    return RunConfig.from_dict(values)


def cmd_train(args) -> int:
    from ltr.store import RunStore
    from ltr.train import RunCancelled, RunInputError, prepare_run, train_run

    config = config_from_args(args)
    settings = _ray_settings(args)
    if settings is not None:
        return _train_on_ray(args, config, settings)
    prepared = prepare_run(config)  # everything validated (data loaded) before the store is touched
    say = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    with RunStore(args.store) as store:
        try:
            result = train_run(config, store, resume=not args.no_resume, force=args.force, prepared=prepared,
                               progress=say)
        except (RunCancelled, KeyboardInterrupt):
            print(f"cancelled: {config.run_id} (resume by running the same command)", file=sys.stderr)
            return EXIT_CANCELLED
        except RunInputError:
            raise
        except Exception as exc:
            # train_run already stored the error with its traceback tail; the terminal gets one line.
            print(f"error: run {config.run_id} failed: {type(exc).__name__}: {' '.join(str(exc).split())} "
                  f"(traceback stored with the run)", file=sys.stderr)
            return EXIT_FAILED
    summary = result.summary
    if not result.retrained:
        say(f"{result.run_id} already completed; printing the stored result (--force retrains)")
    if args.out:
        _write_json(Path(args.out), summary)
    test = " ".join(f"{k}={v:.4f}" for k, v in summary["test"].items())
    print(f"{result.run_id} {summary['status']} {test} train_seconds={summary['train_seconds']:.1f}")
    return 0


def _train_on_ray(args, config, settings) -> int:
    """``train --executor ray``: the run as one Ray task (what dashboard jobs on the Ray executor run)."""
    from ltr.grid import Grid, validate_grid
    from ltr.ray_runner import run_one_ray
    from ltr.store import RunStore, default_store_path
    from ltr.train import run_summary

    if args.no_resume:
        raise CliError("--no-resume is not supported with --executor ray (use --force to start over)")
    validate_grid(Grid(config.run_id, [config]))  # names and data checked here; the rest on the worker
    store_path = Path(args.store) if args.store else default_store_path()
    outcome = run_one_ray(config, store_path, settings, force=args.force)
    if outcome.cancelled:
        print(f"cancelled: {config.run_id} (resume by running the same command)", file=sys.stderr)
        return EXIT_CANCELLED
    if outcome.failed:
        print(f"error: run {config.run_id} failed: {outcome.failed[config.run_id]}", file=sys.stderr)
        return EXIT_FAILED
    with RunStore(store_path) as store:
        summary = run_summary(store, config.run_id)
    if args.out:
        _write_json(Path(args.out), summary)
    test = " ".join(f"{k}={v:.4f}" for k, v in summary["test"].items())
    print(f"{config.run_id} {summary['status']} {test} train_seconds={summary['train_seconds']:.1f}")
    return 0


def cmd_grid(args) -> int:
    from ltr.grid import expand_grid, read_grid_file, run_grid, split_done, validate_grid
    from ltr.store import RunStore, default_store_path

    spec = read_grid_file(args.config) if args.config else {}
    for key in ("data", "folds", "losses", "models", "seeds"):
        if getattr(args, key):
            spec[key] = getattr(args, key)
    train = dict(spec.get("train", {}))
    for key in ("epochs", "lr", "loss_lr", "batch_size", "slate_length", "patience", "log_every", "flush_every"):
        if getattr(args, key) is not None:
            train[key] = getattr(args, key)
    spec["train"] = train
    if args.name:
        spec["name"] = args.name
    spec.setdefault("name", Path(args.config).stem if args.config else "cli-grid")
    grid = expand_grid(spec, source=args.config or "grid flags")
    validate_grid(grid)
    store_path = Path(args.store) if args.store else default_store_path()
    if args.dry_run:
        with RunStore(store_path) as store:
            todo, done = split_done(grid, store)
        for cfg in todo:
            print(cfg.run_id)
        print(f"{len(todo)} to run, {len(done)} already completed", file=sys.stderr)
        return 0
    settings = _ray_settings(args)
    if settings is not None:
        from ltr.ray_runner import run_grid_ray

        outcome = run_grid_ray(grid, store_path, settings, force=args.force, progress=not args.no_progress)
    else:
        outcome = run_grid(grid, store_path, workers=args.workers, devices=args.devices,
                           progress=not args.no_progress, force=args.force)
    print(f"{grid.name}: {len(outcome.completed)} completed, {len(outcome.skipped)} already done, "
          f"{len(outcome.failed)} failed")
    for run_id, why in outcome.failed.items():
        print(f"failed {run_id}: {why}", file=sys.stderr)
    return EXIT_FAILED if outcome.failed else 0


def cmd_report(args) -> int:
    import pandas as pd

    from ltr.report import completed_runs, configurations, format_text, significance_table, to_csv, to_latex
    from ltr.store import RunStore, canonical_data

    tables = []
    with RunStore(args.store) as store:
        for data in args.data:
            models = args.model or sorted(set(store.list_runs(data=canonical_data(data), status="completed")["model"]))
            if not models:
                raise CliError(f"no completed runs for data {data!r} in {store.path}")
            for model in models:
                if args.list_configurations:
                    listed = configurations(completed_runs(store, data, model, experiment=args.experiment,
                                                           seed=args.seed))
                    print(f"{canonical_data(data)} / {model}")
                    print(listed.drop(columns="finished").to_string(index=False))
                    continue
                tables.append(significance_table(store, data, model, candidate=args.candidate, alpha=args.alpha,
                                                 holm=args.holm, experiment=args.experiment,
                                                 seed=args.seed, configuration=args.configuration,
                                                 exclude_no_relevant=args.exclude_no_relevant))
    if args.list_configurations:
        return 0
    if args.json:
        records = pd.concat(tables, ignore_index=True)
        print(records.to_json(orient="records", indent=1))
    else:
        print("\n\n".join(format_text(t) for t in tables))
    if args.csv:
        to_csv(pd.concat(tables, ignore_index=True), args.csv)
    if args.latex:
        to_latex(tables, args.latex)
    return 0


def cmd_runs(args) -> int:
    from ltr.store import RunStore, canonical_data, run_is_live

    data = None if args.data is None else [canonical_data(d) for d in args.data]  # as runs store it
    with RunStore(args.store) as store:  # a listing: reads only (dead trainers show as "running (dead)")
        runs = store.list_runs(status=args.status, data=data, experiment=args.experiment)
    runs["status"] = [("running (dead)" if r["status"] == "running" and not run_is_live(r) else r["status"])
                      for r in runs.to_dict("records")]
    # the Results page's x-axis is (train_seconds + pretrain_seconds) / 60; cpu, threads and load explain it
    cols = ["run_id", "status", "epochs_done", "best_epoch", "test_ndcg10", "train_seconds", "pretrain_seconds",
            "cpu_seconds", "threads", "load_at_start", "error"]
    runs = runs[cols].copy()
    # Run ids in full (they are what one copies); of an error only its first line (the message).
    runs["error"] = [e if not isinstance(e, str) else _shorten(e.splitlines()[0] if e else e, 80)
                     for e in runs["error"]]
    print(runs.to_string(index=False) if not runs.empty else "no runs")
    return 0


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _write_json(path: Path, payload: dict) -> None:
    atomic_write_text(path, json.dumps(payload, indent=1, allow_nan=False))


def cmd_worker(args) -> int:
    from ltr.train.host import DEFAULT_IDLE_EXIT_SECONDS, serve

    return serve(0, idle_exit=DEFAULT_IDLE_EXIT_SECONDS if args.idle_exit is None else args.idle_exit)


COMMANDS = {"train": cmd_train, "grid": cmd_grid, "report": cmd_report, "runs": cmd_runs, "worker": cmd_worker}


def _input_errors() -> tuple[type[BaseException], ...]:
    """Bad-input exception types of the modules this command imported (one not imported raised nothing)."""
    errors = [CliError]
    for module, name in (("ltr.train", "RunInputError"), ("ltr.grid", "GridError"), ("ltr.report", "ReportError"),
                         ("core.ray_cluster", "RayConfigError")):
        if module in sys.modules:
            errors.append(getattr(sys.modules[module], name))
    return tuple(errors)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        return EXIT_CANCELLED
    except Exception as exc:
        if not isinstance(exc, _input_errors()):
            raise
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT
