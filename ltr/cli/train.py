"""``train``: train (or resume) one run and record it in the run store (on this machine, or as one
Ray task with ``--executor ray``)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core import cli
from ltr.cli.options import add_executor_flags, add_hyper_parameters, ray_settings, write_json


def config_from_args(args: argparse.Namespace):
    from ltr.train import RunConfig

    values = {k: getattr(args, k) for k in ("data", "fold", "loss", "model", "seed", "epochs", "lr", "loss_lr",
                                            "batch_size", "slate_length", "patience", "log_every", "flush_every", "device",
                                            "experiment") if getattr(args, k, None) is not None}
    if "loss" not in values:  # a tree ranker's loss is its LightGBM objective (ltr.gbdt)
        from ltr.gbdt import GBDT_MODELS

        if str(args.model).lower() not in GBDT_MODELS:
            raise cli.InputError(f"--loss is required for model {args.model!r} (only a tree ranker, "
                                 f"{', '.join(GBDT_MODELS)}, has its own objective)")
        values["loss"] = GBDT_MODELS[str(args.model).lower()]
    values["loss_params"] = dict(args.loss_param)
    values["model_params"] = dict(args.model_param)
    return RunConfig.from_dict(values)


def cmd_train(args) -> int:
    from ltr.store import RunStore
    from ltr.train import RunCancelled, RunInputError, prepare_run, train_run

    config = config_from_args(args)
    settings = ray_settings(args)
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
            return cli.EXIT_CANCELLED
        except RunInputError:
            raise
        except Exception as exc:
            # train_run already stored the error with its traceback tail; the terminal gets one line.
            print(f"error: run {config.run_id} failed: {type(exc).__name__}: {' '.join(str(exc).split())} "
                  f"(traceback stored with the run)", file=sys.stderr)
            return cli.EXIT_FAILED
    if not result.retrained:
        say(f"{result.run_id} already completed; printing the stored result (--force retrains)")
    _report(args, result.run_id, result.summary)
    return cli.EXIT_OK


def _train_on_ray(args, config, settings) -> int:
    """``train --executor ray``: the run as one Ray task (what dashboard jobs on the Ray executor run)."""
    from ltr.grid import Grid, validate_grid
    from ltr.ray_runner import run_one_ray
    from ltr.store import RunStore, default_store_path
    from ltr.train import run_summary

    if args.no_resume:
        raise cli.InputError("--no-resume is not supported with --executor ray (use --force to start over)")
    validate_grid(Grid(config.run_id, [config]))  # names and data checked here; the rest on the worker
    store_path = Path(args.store) if args.store else default_store_path()
    outcome = run_one_ray(config, store_path, settings, force=args.force)
    if outcome.cancelled:
        print(f"cancelled: {config.run_id} (resume by running the same command)", file=sys.stderr)
        return cli.EXIT_CANCELLED
    if outcome.failed:
        print(f"error: run {config.run_id} failed: {outcome.failed[config.run_id]}", file=sys.stderr)
        return cli.EXIT_FAILED
    with RunStore(store_path) as store:
        summary = run_summary(store, config.run_id)
    _report(args, config.run_id, summary)
    return cli.EXIT_OK


def _report(args, run_id: str, summary: dict) -> None:
    """The run's result: ``--out`` writes it, ``--json`` prints it (the same document), else one line."""
    if args.out:
        write_json(Path(args.out), summary)
    if args.json:
        cli.print_json(summary)
        return
    test = " ".join(f"{k}={v:.4f}" for k, v in summary["test"].items())
    print(f"{run_id} {summary['status']} {test} train_seconds={summary['train_seconds']:.1f}")


def _arguments(t: argparse.ArgumentParser) -> None:
    t.add_argument("--data", required=True, help="data set name (synthetic-mq2008, mq2008, ...) or a folder of FoldK/")
    t.add_argument("--fold", required=True, type=cli.positive_int)
    t.add_argument("--loss", default=None, help="the loss (required, except for a tree ranker: lambdamart's is "
                                                "LightGBM's lambdarank objective)")
    t.add_argument("--model", required=True, help="a ranker (mlp, attsets, attention_mil, context_aware) or a tree "
                                                  "ranker (lambdamart: LightGBM; --epochs = most trees, --patience = "
                                                  "early-stopping rounds, --model-param learning_rate=0.05 ...)")
    t.add_argument("--seed", type=cli.seed, default=argparse.SUPPRESS)
    add_hyper_parameters(t, grid=False)
    t.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda when available)")
    t.add_argument("--experiment", default=None, help="experiment name recorded with the run")
    t.add_argument("--store", default=None, help="run store (default cache/runs.sqlite)")
    t.add_argument("--out", default=None, help="write the run's results as JSON to this file")
    t.add_argument("--force", action="store_true", help="retrain even if the run completed (replaces it)")
    t.add_argument("--no-resume", action="store_true", help="ignore a checkpoint and start over")
    t.add_argument("--quiet", action="store_true", help="no per-epoch progress on stderr")
    cli.json_arg(t, help="print the run's results (what --out writes) as one JSON document instead of a line")
    add_executor_flags(t)


COMMANDS = (cli.Command("train", "train (or resume) one run and record it in the run store", _arguments, cmd_train),)
