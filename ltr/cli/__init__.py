"""``python -m ltr``: ``train`` one run, run a ``grid``, ``tune`` a loss's hyper-parameters, print/export the
``report``, check the paper's ``findings``, ``export`` a comparison's figures and tables, list ``runs``, ``split`` a
LETOR file into folds by query;
``worker`` is the host process that trains many runs (:mod:`ltr.train.host`).

Each module of this package declares its commands (``COMMANDS``, of :class:`core.cli.Command`);
this module finds them and is the :class:`core.cli.CommandLine` over them, so a new command is a new
module. ``options`` holds the flags several commands share. Exit status, flag types and ``--json``
follow :mod:`core.cli`: bad input (unknown names, missing or malformed data, a config clash with a
stored run) prints one ``error: ...`` line on stderr and exits with status 2, having written nothing
to the store; a run that fails while training exits 1 (the store marks it failed with its error); a
cancelled one (SIGTERM, Ctrl-C) exits 130.
"""
from __future__ import annotations

import sys
from typing import Sequence

from core import cli
# the names scripts and tests take from ``ltr.cli`` (the exit statuses, a K=V flag's parser, a run's config)
from core.cli import EXIT_BAD_INPUT, EXIT_CANCELLED, EXIT_FAILED  # noqa: F401
from core.cli import key_value as parse_param  # noqa: F401
from ltr.cli.train import config_from_args  # noqa: F401

HELP_ORDER = ("train", "grid", "tune", "report", "findings", "export", "worker", "runs", "split")


def _input_errors() -> tuple[type[BaseException], ...]:
    """Bad-input exception types of the modules this command imported (one not imported raised nothing)."""
    errors = []
    for module, name in (("ltr.train", "RunInputError"), ("ltr.grid", "GridError"), ("ltr.report.runs", "ReportError"),
                         ("ltr.tune", "TuneError"), ("core.ray_cluster", "RayConfigError")):
        if module in sys.modules:
            errors.append(getattr(sys.modules[module], name))
    return tuple(errors)


COMMAND_LINE = cli.CommandLine("python -m ltr", "LearnDCG study: training runs, grids, reports.",
                               cli.discover_commands(__name__, HELP_ORDER), input_errors=_input_errors)


def build_parser():
    return COMMAND_LINE.build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND_LINE.main(argv)
