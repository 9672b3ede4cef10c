"""The one convention of the project's command lines (``python -m ltr``, ``python -m pipeline``,
``python -m core.jobs``): how a command is declared and registered, how its flags are checked, what it
prints with ``--json``, and its exit status. ``ltr.cli``, ``pipeline.cli`` and ``core.jobs.cli`` are each
a :class:`CommandLine` over the :class:`Command` objects their modules declare; none parses, prints or
exits any other way.

Exit status (every command of both CLIs)::

    0    success
    1    the command failed while running: a run that failed, a server or model that did not
         answer, a grid with failed runs; one ``error: ...`` line on stderr
    2    bad usage or bad input, refused before anything is stored or started: a flag argparse
         refuses (its usage line, then ``PROG COMMAND: error: argument --flag: <problem>``), or
         input the command refuses (a malformed file, an unknown name, a refused combination:
         one ``error: ...`` line on stderr)
    130  cancelled (Ctrl-C, SIGTERM)

``--json`` (:func:`json_arg`, every command that prints results): exactly one JSON document on
stdout (:func:`print_json`: indent 1, newline-terminated), the same figures as the text output;
progress and notes go to stderr. A new command's document is an object whose lists sit under named
keys (``{"runs": [...]}``); ``ltr report --json``'s list of table rows is older and kept as it is.

A command is one module (or one function of a module) that declares a :class:`Command`, its
arguments and its ``run``, in the module's ``COMMANDS``; the CLI finds every module of its package
that has one (:func:`discover_commands`), so adding a command is adding that module.

Flag types (:data:`positive_int` ... :func:`named_file`) reuse the rules of :mod:`core.fields`, which
the dashboard's forms check too, so a flag and its form field accept the same values; argparse puts
the flag's name in front of the problem ("argument --epochs: expected an integer >= 1, got -3").
"""
from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from core import fields

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130


class InputError(ValueError):
    """Input a command refuses before doing anything: ``error: <message>``, exit status 2."""


# ---- flag types (argparse ``type=``): the error names the flag and the problem ----------------------
positive_int = fields.POSITIVE_INT.argparse_type()
nonnegative_int = fields.NONNEGATIVE_INT.argparse_type()
zero_or_positive_int = fields.ZERO_OR_POSITIVE_INT.argparse_type()
positive_float = fields.POSITIVE_FLOAT.argparse_type()
nonnegative_float = fields.NONNEGATIVE_FLOAT.argparse_type()
quantile = fields.QUANTILE.argparse_type()
probability = fields.NumberRule(float, 0, 1, what="a number between 0 and 1").argparse_type()
seed = fields.SEED.argparse_type()


def number(kind, low=None, high=None, *, low_open=False, high_open=False, what=""):
    """A flag type for a number within other bounds (a :class:`core.fields.NumberRule`)."""
    return fields.NumberRule(kind, low, high, low_open, high_open, what).argparse_type()


def existing_file(text: str) -> str:
    """A file that exists (the path as given, ``~`` expanded)."""
    path = Path(text).expanduser()
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}" if not path.exists() else f"not a file: {text}")
    return str(path)


def existing_dir(text: str) -> str:
    """A folder that exists (the path as given, ``~`` expanded)."""
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"no such folder: {text}" if not path.exists() else f"not a folder: {text}")
    return str(path)


def named_file(text: str) -> str:
    """``NAME`` or ``NAME=FILE`` (a component named by its name, or by a file that exists), returned as
    given: the library reads the grammar (``pipeline.study.components.parse_component``); this
    checks it before any work starts. A value without ``=`` (an LLM spec, a data folder's name) passes."""
    name, sep, file = text.partition("=")
    if not name.strip() or (sep and not file.strip()):
        raise argparse.ArgumentTypeError(f"expected NAME or NAME=FILE, got {text!r}")
    if sep and not Path(file.strip()).expanduser().is_file():
        raise argparse.ArgumentTypeError(f"no such file: {file.strip()} (in {text!r})")
    return text


named_file.__name__ = "NAME[=FILE]"


def key_value(text: str) -> tuple[str, object]:
    """``key=value`` with the value read as JSON when it parses (numbers, true/false, lists), else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


key_value.__name__ = "key=value"


# ---- --json ------------------------------------------------------------------------------------------
def json_arg(p: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--json``: the command prints one JSON document instead of text."""
    p.add_argument("--json", action="store_true", help=help or "print the result as one JSON document")


def print_json(obj) -> None:
    """The ``--json`` document on stdout."""
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


# ---- commands ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    """One subcommand: ``arguments(parser)`` declares its flags, ``run(args)`` does it and returns its
    exit status (None: 0). Errors are raised, never printed here: the :class:`CommandLine` maps them."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int | None]


def discover_commands(package: str, order: Sequence[str] = ()) -> list[Command]:
    """The :class:`Command` objects in the ``COMMANDS`` of every module of ``package`` (modules
    without one, such as shared option helpers, hold none): the modules named in ``order`` first, in
    that order, then the others by name."""
    root = importlib.import_module(package)
    names = sorted(m.name for m in pkgutil.iter_modules(root.__path__) if not m.name.startswith("_"))
    ranked = [n for n in order if n in names] + [n for n in names if n not in order]
    commands = []
    for name in ranked:
        commands.extend(getattr(importlib.import_module(f"{package}.{name}"), "COMMANDS", ()))
    return commands


class CommandLine:
    """A CLI: its parser built from ``commands``, and ``main`` mapping what a command raises to the
    exit status of the convention (module docstring). ``input_errors`` / ``failures`` return the
    exception types that mean bad input (2) / a failure while running (1); anything else is a bug and
    raises with its traceback."""

    def __init__(self, prog: str, description: str, commands: Iterable[Command], *,
                 input_errors: Callable[[], tuple[type[BaseException], ...]] = lambda: (),
                 failures: Callable[[], tuple[type[BaseException], ...]] = lambda: (),
                 formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter,
                 epilog: str | None = None):
        self.prog, self.description, self.epilog = prog, description, epilog
        self.commands = {c.name: c for c in commands}
        self.input_errors, self.failures, self.formatter_class = input_errors, failures, formatter_class

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog=self.prog, description=self.description, epilog=self.epilog,
                                         formatter_class=self.formatter_class)
        sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
        for command in self.commands.values():
            p = sub.add_parser(command.name, help=command.help, description=command.help,
                               formatter_class=self.formatter_class)
            command.arguments(p)
        return parser

    def main(self, argv: Sequence[str] | None = None) -> int:
        args = self.build_parser().parse_args(argv)  # bad usage: argparse prints it and exits 2
        try:
            status = self.commands[args.command].run(args)
        except KeyboardInterrupt:
            return EXIT_CANCELLED
        except Exception as exc:
            if isinstance(exc, (InputError, *self.input_errors())):
                status = EXIT_BAD_INPUT
            elif isinstance(exc, self.failures()):
                status = EXIT_FAILED
            else:
                raise
            print(f"error: {' '.join(str(exc).split()) or type(exc).__name__}", file=sys.stderr)
        return EXIT_OK if status is None else status
