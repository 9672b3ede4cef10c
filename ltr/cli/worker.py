"""``worker``: the trainer host (:mod:`ltr.train.host`): trains the JSON-line run requests read on stdin
in this process; it prints no results (each run reports to its log and exit file), so it has no ``--json``."""
from __future__ import annotations

from core import cli


def cmd_worker(args) -> int:
    from ltr.train.host import DEFAULT_IDLE_EXIT_SECONDS, serve

    return serve(0, idle_exit=DEFAULT_IDLE_EXIT_SECONDS if args.idle_exit is None else args.idle_exit)


def _arguments(w) -> None:
    w.add_argument("--idle-exit", type=cli.nonnegative_float, default=None,
                   help="seconds without a request before exiting (default 300)")


COMMANDS = (cli.Command("worker", "host process: train the run requests read on stdin (JSON lines) in this "
                                  "process (used by the grid and the dashboard's job runner)", _arguments, cmd_worker),)
