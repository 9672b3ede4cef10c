"""``tune``: tune each loss's learning rate, batch size and own parameters on validation NDCG@10 with Optuna
(:mod:`ltr.tune`); every trial is a run of the run store, and a killed tuning resumes where it stopped."""
from __future__ import annotations

import sys
from pathlib import Path

from core import cli
from ltr.cli.options import add_executor_flags, ray_settings, write_json
from ltr.tune import DEFAULT_TRIALS, N_STARTUP_TRIALS


def cmd_tune(args) -> int:
    from ltr.grid import Grid, validate_grid
    from ltr.train import RunConfig
    from ltr.gbdt import GBDT_MODELS, is_gbdt_model
    from ltr.tune import tune_studies, tuned_grid

    bases = []
    tree = is_gbdt_model(args.model)
    losses = [GBDT_MODELS[str(args.model).lower()]] if tree else args.losses
    if not losses:
        raise cli.InputError("--losses: required for a neural model (a tree ranker's loss is its objective)")
    for loss in losses:
        values = {"data": args.data, "fold": args.fold, "loss": loss, "model": args.model, "seed": args.seed,
                  "loss_params": dict(args.loss_param), "model_params": dict(args.model_param)}
        values.update({k: getattr(args, k) for k in ("epochs", "slate_length", "patience", "device")
                       if getattr(args, k) is not None})
        bases.append(RunConfig.from_dict(values))
    validate_grid(Grid("tune", bases))  # names, data set and fold checked before any trial starts
    settings = ray_settings(args)  # None: trials train in this process
    results = tune_studies(bases, args.trials, workers=args.workers, quiet=args.quiet, store_path=args.store,
                           sampler_seed=args.sampler_seed, n_startup_trials=args.startup_trials,
                           ray_settings=settings)
    # what ran is read from each study (LossTuning): its trials, sampler, start-up count, pruner and cost
    document = {"data": bases[0].data, "fold": args.fold, "model": args.model, "trials_asked": args.trials,
                "objective": "best validation ndcg@10 (the epoch early stopping keeps)",
                "sampler_seed": args.sampler_seed, "workers": args.workers,
                "losses": [r.as_dict() for r in results], "grid": tuned_grid(results)}
    if args.out:
        write_json(Path(args.out), document)
    if args.json:
        cli.print_json(document)
        return cli.EXIT_OK
    for result in results:
        done = {s: sum(t["state"] == s for t in result.trials) for s in ("COMPLETE", "PRUNED", "FAIL")}
        line = (f"{result.loss}/{result.model}: {result.n_trials} trials "
                f"({', '.join(f'{n} {s.lower()}' for s, n in done.items())}; TPE after "
                f"{result.sampler.get('n_startup_trials')} random; {result.wall_seconds or 0:.0f} s wall, "
                f"{result.cpu_seconds or 0:.0f} s CPU)")
        if result.best is not None:
            params = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in sorted(result.best["params"].items()))
            line += f"; best trial {result.best['number']}: vali ndcg@10 {result.best['value']:.4f} with {params}"
        print(line)
    return cli.EXIT_OK


def _arguments(t) -> None:
    t.add_argument("--data", required=True, help="data set name or a folder of FoldK/")
    t.add_argument("--fold", required=True, type=cli.positive_int)
    t.add_argument("--losses", nargs="+", default=[],
                   help="one study per loss (required, except for a tree ranker: lambdamart tunes LightGBM's settings)")
    t.add_argument("--model", default="mlp")
    t.add_argument("--trials", type=cli.positive_int, default=DEFAULT_TRIALS,
                   help=f"trials per loss in all (those already in the study count; a rerun adds only the missing; "
                        f"default {DEFAULT_TRIALS})")
    t.add_argument("--startup-trials", type=cli.positive_int, default=N_STARTUP_TRIALS,
                   help=f"TPE's random start-up trials before it models the results (default {N_STARTUP_TRIALS})")
    t.add_argument("--workers", type=cli.positive_int, default=1,
                   help="studies tuned at once, each in a process of its own (default 1)")
    t.add_argument("--seed", type=cli.seed, default=0, help="the runs' seed (default 0)")
    t.add_argument("--sampler-seed", type=cli.seed, default=0, help="the TPE sampler's seed (default 0)")
    t.add_argument("--epochs", type=cli.positive_int, default=None, help="maximum epochs per trial (default 50)")
    t.add_argument("--slate-length", type=cli.zero_or_positive_int, default=None)
    t.add_argument("--patience", type=cli.nonnegative_int, default=None)
    t.add_argument("--loss-param", type=cli.key_value, action="append", default=[], metavar="K=V",
                   help="a fixed loss keyword argument (repeatable); tuned ones are set by the study")
    t.add_argument("--model-param", type=cli.key_value, action="append", default=[], metavar="K=V")
    t.add_argument("--device", default=None)
    t.add_argument("--store", default=None, help="run store (default cache/runs.sqlite)")
    t.add_argument("--out", default=None, help="write the JSON document to this file (for ltr grid --tuned)")
    t.add_argument("--quiet", action="store_true", help="no per-epoch progress on stderr")
    add_executor_flags(t)  # local: each trial trains in this process; ray: each trial is one Ray task
    cli.json_arg(t, help='print {"losses": [{"loss", "study", "trials", "best"}], "grid": {...}} as one JSON document')


COMMANDS = (cli.Command("tune", "tune each loss's learning rate, batch size and parameters with Optuna",
                        _arguments, cmd_tune),)
