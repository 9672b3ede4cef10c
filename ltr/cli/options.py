"""The flags several ``ltr`` commands share (training hyper-parameters, the executor), and what the
commands derive from them (the ``[ray]`` settings, a run's result written with ``--out``)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from core import cli
from core.atomic import atomic_write_text


def add_hyper_parameters(p: argparse.ArgumentParser, *, grid: bool) -> None:
    """Training flags shared by ``train`` and ``grid`` (in ``grid`` they override the file); the same
    rules as the Training form's fields (``ltr.views.training.TRAINING_FIELDS``)."""
    default = None if grid else argparse.SUPPRESS
    p.add_argument("--epochs", type=cli.positive_int, default=default, help="maximum epochs (default 50)")
    p.add_argument("--lr", type=cli.positive_float, default=default,
                   help="Adam learning rate of the ranker (default 1e-3)")
    p.add_argument("--loss-lr", type=cli.positive_float, default=default,
                   help="learning rate of the loss parameters (default: --lr)")
    p.add_argument("--batch-size", type=cli.positive_int, default=default, help="lists per batch (default 64)")
    p.add_argument("--slate-length", type=cli.zero_or_positive_int, default=default,
                   help="training lists longer than this are sub-sampled (default: whole lists)")
    p.add_argument("--patience", type=cli.nonnegative_int, default=default,
                   help="stop after this many epochs without validation NDCG@10 gain; 0 = never (default 10)")
    p.add_argument("--log-every", type=cli.positive_int, default=default,
                   help="record step metrics every N steps (default 1)")
    p.add_argument("--flush-every", type=cli.positive_int, default=default,
                   help="write logged steps to the store every N logged steps (default 512; also every 10 s)")
    if grid:
        return  # per-loss / per-model parameters of a grid go in its file ([loss_params.<name>])
    p.add_argument("--loss-param", type=cli.key_value, action="append", default=[], metavar="K=V",
                   help="loss keyword argument (repeatable), value as JSON, e.g. normalisation=learned")
    p.add_argument("--model-param", type=cli.key_value, action="append", default=[], metavar="K=V",
                   help="ranker keyword argument (repeatable), e.g. hidden=[256,128]")


def add_executor_flags(p: argparse.ArgumentParser) -> None:
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


def ray_settings(args):
    """The ``[ray]`` settings with this command's flags applied; None for the local executor."""
    from core.ray_cluster import ray_settings as configured

    settings = configured().with_overrides(executor=args.executor, address=args.address,
                                           cpus_per_run=args.cpus_per_run, gpus_per_run=args.gpus_per_run,
                                           max_retries=args.max_retries, checkpoint_dir=args.checkpoint_dir)
    return settings if settings.executor == "ray" else None


def write_json(path: Path, payload: dict) -> None:
    atomic_write_text(path, json.dumps(payload, indent=1, allow_nan=False))
