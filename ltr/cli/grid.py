"""``grid``: run a grid of runs (a file's lists, overridden by flags), skipping those already completed."""
from __future__ import annotations

import sys
from pathlib import Path

from core import cli
from ltr.cli.options import add_executor_flags, add_hyper_parameters, ray_settings


def cmd_grid(args) -> int:
    from ltr.grid import expand_grid, read_grid_file, run_grid, split_done, validate_grid
    from ltr.store import RunStore, default_store_path

    spec = read_grid_file(args.config) if args.config else {}
    if args.tuned:  # `ltr tune --out FILE`: each loss's tuned lr, batch size and parameters (ltr.tune)
        spec = _with_tuned(spec, args.tuned)
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
        if args.json:
            cli.print_json({"grid": grid.name, "to_run": [c.run_id for c in todo],
                            "completed": [c.run_id for c in done]})
        else:
            for cfg in todo:
                print(cfg.run_id)
        print(f"{len(todo)} to run, {len(done)} already completed", file=sys.stderr)
        return cli.EXIT_OK
    settings = ray_settings(args)
    if settings is not None:
        from ltr.ray_runner import run_grid_ray

        outcome = run_grid_ray(grid, store_path, settings, force=args.force, progress=not args.no_progress)
    else:
        outcome = run_grid(grid, store_path, workers=args.workers, devices=args.devices,
                           progress=not args.no_progress, force=args.force)
    if args.json:
        cli.print_json({"grid": grid.name, "completed": list(outcome.completed), "skipped": list(outcome.skipped),
                        "failed": dict(outcome.failed)})
    else:
        print(f"{grid.name}: {len(outcome.completed)} completed, {len(outcome.skipped)} already done, "
              f"{len(outcome.failed)} failed")
    for run_id, why in outcome.failed.items():
        print(f"failed {run_id}: {why}", file=sys.stderr)
    return cli.EXIT_FAILED if outcome.failed else cli.EXIT_OK


def _with_tuned(spec: dict, path: str) -> dict:
    import json

    from ltr.tune import apply_tuned

    try:
        tuned = json.loads(Path(path).read_text())
        return apply_tuned(spec, tuned)
    except (ValueError, AttributeError, TypeError) as exc:
        raise cli.InputError(f"{path}: not an `ltr tune --out` document ({' '.join(str(exc).split())})") from None


def _arguments(g) -> None:
    g.add_argument("--config", type=cli.existing_file,
                   help="grid file (.toml, .yaml); flags below override its lists and [train]")
    g.add_argument("--name", help="experiment name (default: the file's name key, else its file name)")
    g.add_argument("--data", nargs="+")
    g.add_argument("--folds", nargs="+", type=cli.positive_int)
    g.add_argument("--losses", nargs="+")
    g.add_argument("--models", nargs="+")
    g.add_argument("--seeds", nargs="+", type=cli.seed)
    g.add_argument("--tuned", type=cli.existing_file, default=None,
                   help="the JSON `ltr tune --out` wrote: each tuned loss's lr, batch size, loss_lr and parameters "
                        "override the grid's (per loss)")
    add_hyper_parameters(g, grid=True)
    g.add_argument("--workers", type=cli.positive_int, default=1, help="runs at once (default 1)")
    g.add_argument("--devices", nargs="+", help="device per worker slot, round-robin (default: every GPU, else cpu)")
    g.add_argument("--store", default=None)
    g.add_argument("--force", action="store_true", help="retrain completed runs too")
    g.add_argument("--dry-run", action="store_true", help="list the runs to do and exit")
    g.add_argument("--no-progress", action="store_true")
    cli.json_arg(g, help='print {"grid", "completed", "skipped", "failed"} (with --dry-run: {"grid", "to_run", '
                         '"completed"}) as one JSON document')
    add_executor_flags(g)


COMMANDS = (cli.Command("grid", "run a grid of runs, skipping those already completed", _arguments, cmd_grid),)
