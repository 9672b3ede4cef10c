"""The one CLI convention (``core.cli``) and the command lines built on it (``python -m ltr``,
``python -m pipeline``, ``python -m core.jobs``): flag types that name the flag and the problem, exit status 0/1/2/130,
``--json`` on every command that prints results, commands found as modules, the README's and the guides'
commands still parsing, and the generated CLI reference (docs/cli.md) matching the parsers."""
from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

import pytest

from core import cli

ROOT = Path(__file__).resolve().parents[2]


def _parser(**types):
    p = argparse.ArgumentParser(prog="prog")
    for flag, kind in types.items():
        p.add_argument(f"--{flag.replace('_', '-')}", type=kind)
    return p


def _usage_error(parser, argv, capsys) -> str:
    with pytest.raises(SystemExit) as done:
        parser.parse_args(argv)
    assert done.value.code == cli.EXIT_BAD_INPUT
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_flag_types_name_the_flag_and_the_problem(tmp_path, capsys):
    present = tmp_path / "qrels.txt"
    present.write_text("q 0 d 1\n")
    p = _parser(epochs=cli.positive_int, quantile=cli.quantile, p=cli.probability, qrels=cli.existing_file,
                data=cli.existing_dir, judge=cli.named_file, param=cli.key_value, seed=cli.seed)
    assert _usage_error(p, ["--epochs", "-3"], capsys) == "prog: error: argument --epochs: expected an integer >= 1, got -3"
    assert "argument --quantile: expected a number strictly between 0 and 1, got 1" in _usage_error(
        p, ["--quantile", "1"], capsys)
    assert "argument --p: expected a number between 0 and 1, got 1.5" in _usage_error(p, ["--p", "1.5"], capsys)
    assert f"argument --qrels: no such file: {tmp_path / 'nope'}" in _usage_error(
        p, ["--qrels", str(tmp_path / "nope")], capsys)
    assert f"argument --qrels: not a file: {tmp_path}" in _usage_error(p, ["--qrels", str(tmp_path)], capsys)
    assert f"argument --data: not a folder: {present}" in _usage_error(p, ["--data", str(present)], capsys)
    assert "argument --judge: expected NAME or NAME=FILE, got 'j='" in _usage_error(p, ["--judge", "j="], capsys)
    assert "argument --judge: no such file: /no/such.txt (in 'j=/no/such.txt')" in _usage_error(
        p, ["--judge", "j=/no/such.txt"], capsys)
    assert "argument --param: expected key=value, got 'x'" in _usage_error(p, ["--param", "x"], capsys)
    assert "argument --seed: expected an integer from 0 to 2147483647" in _usage_error(p, ["--seed", "-1"], capsys)
    ok = p.parse_args(["--epochs", "3", "--qrels", str(present), "--data", str(tmp_path), "--judge",
                       f"j={present}", "--param", "hidden=[2, 1]", "--seed", "0"])
    assert (ok.epochs, ok.qrels, ok.data, ok.judge, ok.param) == (3, str(present), str(tmp_path), f"j={present}",
                                                                  ("hidden", [2, 1]))
    assert p.parse_args(["--judge", "ollama:qwen3:8b@http://h:1"]).judge == "ollama:qwen3:8b@http://h:1"


class Failure(RuntimeError):
    pass


def _command_line(run):
    def arguments(p):
        p.add_argument("--n", type=cli.positive_int, default=1)
        cli.json_arg(p)

    return cli.CommandLine("prog", "a test CLI", [cli.Command("go", "do it", arguments, run)],
                           input_errors=lambda: (LookupError,), failures=lambda: (Failure,))


def _raises(exc):
    def run(args):
        raise exc
    return run


def test_exit_status_of_every_outcome(capsys):
    def prints(args):
        cli.print_json({"n": args.n}) if args.json else print(f"n = {args.n}")

    assert _command_line(prints).main(["go", "--n", "2", "--json"]) == cli.EXIT_OK == 0
    assert capsys.readouterr().out == '{\n "n": 2\n}\n'
    assert _command_line(lambda args: 7).main(["go"]) == 7  # a command's own status is kept
    for exc, status in ((cli.InputError("bad  input\n  here"), 2), (KeyError("unknown"), 2),
                        (Failure("server gone"), 1), (KeyboardInterrupt(), 130)):
        assert _command_line(_raises(exc)).main(["go"]) == status
        err = capsys.readouterr().err
        assert err == ("" if status == 130 else f"error: {' '.join(str(exc).split())}\n")
    with pytest.raises(ZeroDivisionError):  # neither input nor a declared failure: a bug, with its traceback
        _command_line(_raises(ZeroDivisionError("bug"))).main(["go"])
    with pytest.raises(SystemExit) as usage:
        _command_line(prints).main(["go", "--n", "0"])
    assert usage.value.code == 2 and "prog go: error: argument --n: expected an integer >= 1, got 0" in \
        capsys.readouterr().err


def test_commands_are_found_as_modules(tmp_path, monkeypatch):
    package = tmp_path / "fakecli"
    package.mkdir()
    (package / "__init__.py").write_text('"""A CLI package."""\n')
    (package / "helpers.py").write_text("SHARED = 1\n")  # no COMMANDS: an option helper
    for name in ("alpha", "beta", "zeta"):
        (package / f"{name}.py").write_text(
            "from core import cli\n"
            f"COMMANDS = (cli.Command({name!r}, 'h', lambda p: None, lambda a: None),)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [c.name for c in cli.discover_commands("fakecli", order=("zeta", "beta"))] == ["zeta", "beta", "alpha"]


@pytest.mark.parametrize("package", ["ltr.cli", "pipeline.cli"])
def test_every_command_module_declares_its_commands(package):
    """A module with a ``cmd_*`` function but no ``COMMANDS`` (say, one written to an older registration
    shape) would be skipped by ``discover_commands`` without a word: its command would be missing."""
    import importlib
    import pkgutil

    root = importlib.import_module(package)
    silent = []
    for info in pkgutil.iter_modules(root.__path__):
        module = importlib.import_module(f"{package}.{info.name}")
        if any(name.startswith("cmd_") for name in vars(module)) and not getattr(module, "COMMANDS", ()):
            silent.append(module.__name__)
    assert not silent, f"command modules without COMMANDS (their commands are not registered): {silent}"


def _subcommands(parser):
    """``(path, subparser)`` of every leaf command (``llm check`` is a leaf of ``llm``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                children = list(_subcommands(sub))
                yield from ([(f"{name} {c}", s) for c, s in children] if children else [(name, sub)])


def _parsers():
    from ltr.cli import build_parser as ltr_parser
    from pipeline.cli import build_parser as pipeline_parser

    from core.jobs.cli import build_parser as jobs_parser

    return {"ltr": ltr_parser(), "pipeline": pipeline_parser(), "core.jobs": jobs_parser()}


# the trainer host answers JSON lines on stdin, the job worker runs jobs: they print no results
NO_RESULTS = {"ltr worker", "core.jobs worker"}


def test_every_command_that_prints_results_has_json():
    missing = [f"{cli_name} {path}" for cli_name, parser in _parsers().items() for path, sub in _subcommands(parser)
               if f"{cli_name} {path}" not in NO_RESULTS
               and not any("--json" in a.option_strings for a in sub._actions)]
    assert not missing, f"commands without --json: {missing}"


# the documents a reader copies commands from: the README and the guides in docs/ (cli.md is generated
# from the parsers themselves, so it is checked by comparison below, not line by line)
DOCUMENTS = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")
                                  if p.name != "cli.md"))


def document_commands(name: str) -> list[list[str]]:
    """Every ``python -m ltr|pipeline ...`` line of a document's bash blocks (continuation lines joined,
    comments cut)."""
    text = (ROOT / name).read_text().replace("\\\n", " ")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if re.match(r"python -m (ltr|pipeline) ", line):
                lines.append(shlex.split(line)[2:])
    return lines


def readme_commands() -> list[list[str]]:
    """The commands of the README and of every guide."""
    return [argv for name in DOCUMENTS for argv in document_commands(name)]


@pytest.mark.parametrize("argv", readme_commands(), ids=lambda a: " ".join(a[:3]))
def test_readme_commands_still_parse(argv, capsys):
    parser = _parsers()[argv[0]]
    leaves = dict(_subcommands(parser))
    path = " ".join(argv[1:3]) if " ".join(argv[1:3]) in leaves else argv[1]
    sub = leaves[path]
    flags = {s for a in sub._actions for s in a.option_strings}
    unknown = [t.split("=")[0] for t in argv if t.startswith("--") and t.split("=")[0] not in flags]
    assert not unknown, f"the docs' `{' '.join(argv)}` uses flags the command lacks: {unknown}"
    with pytest.raises(SystemExit) as done:
        parser.parse_args([*path.split(), "--help"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("usage:")


def test_the_readme_and_the_guides_list_commands_of_both_clis():
    """The README's tour runs both CLIs, and each study's guide lists its own CLI's commands (the reference
    material moved out of the README: a guide whose commands stopped being read would pass silently)."""
    assert {argv[0] for argv in document_commands("README.md")} == {"ltr", "pipeline"}
    assert {argv[0] for argv in document_commands("docs/ltr-guide.md")} == {"ltr"}
    assert {argv[0] for argv in document_commands("docs/failure-guide.md")} == {"pipeline"}
    assert len(readme_commands()) >= 40


def test_the_command_documents_are_read(tmp_path, monkeypatch):
    """The reader of the documents finds a continued line, cuts a comment and skips other commands."""
    (tmp_path / "doc.md").write_text("text\n```bash\nexport X=1\npython -m ltr train --data d \\\n"
                                     "    --fold 1  # a comment --nope\nmake test\n```\n"
                                     "```toml\npython -m ltr grid --nope\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert document_commands("doc.md") == [["ltr", "train", "--data", "d", "--fold", "1"]]


def test_the_cli_reference_is_what_the_commands_say_now():
    """docs/cli.md is generated from the parsers (``python -m core.cli_reference``): a flag added, renamed or
    re-explained without regenerating it fails here, so the reference cannot drift."""
    from core import cli_reference

    text = cli_reference.render()
    assert cli_reference.REFERENCE.read_text() == text, "docs/cli.md is out of date: run python -m core.cli_reference"
    for cli_name, parser in _parsers().items():  # every command of every CLI has its section
        for path, _sub in _subcommands(parser):
            assert f"\n### python -m {cli_name} {path}\n" in text, path


def test_the_cli_reference_check_fails_on_a_stale_file(tmp_path, monkeypatch, capsys):
    from core import cli_reference

    stale = tmp_path / "cli.md"
    stale.write_text(cli_reference.render().replace("--epochs", "--epoch"))
    monkeypatch.setattr(cli_reference, "REFERENCE", stale)
    monkeypatch.setattr(cli_reference, "ROOT", tmp_path)
    assert cli_reference.main(["--check"]) == cli.EXIT_FAILED and "out of date" in capsys.readouterr().err
    assert cli_reference.main([]) == cli.EXIT_OK and cli_reference.main(["--check"]) == cli.EXIT_OK
    assert stale.read_text() == cli_reference.render()


@pytest.mark.parametrize("argv, message", [
    (["train", "--data", "d", "--fold", "0", "--loss", "l", "--model", "m"], "argument --fold: expected an integer >= 1"),
    (["grid", "--folds", "1", "-2"], "argument --folds: expected an integer >= 1, got -2"),
    (["grid", "--seeds", "-1"], "argument --seeds: expected an integer from 0 to 2147483647, got -1"),
    (["report", "--data", "d", "--alpha", "2"], "argument --alpha: expected a number between 0 and 1, got 2"),
    (["grid", "--config", "/no/such.toml"], "argument --config: no such file: /no/such.toml"),
], ids=lambda x: x if isinstance(x, str) else " ".join(x[:2]))
def test_ltr_flags_use_the_convention_types(argv, message, capsys):
    """Fold numbers, seeds, the t-test level and the grid file were plain ints, floats and strings
    (a fold 0 or a negative seed got as far as the data or the run config)."""
    from ltr.cli import main

    with pytest.raises(SystemExit) as usage:
        main(argv)
    assert usage.value.code == 2 and message in capsys.readouterr().err


def test_llm_backend_choices_come_from_the_backend_registry():
    """``llm purge --backend`` and the early model check of ``--generator``/``--judge`` know the registered
    backends (a list typed into the CLI would miss a new one)."""
    from pipeline.cli import build_parser
    from pipeline.cli.args import llm_backend_kinds
    from pipeline.llm.backends import BACKENDS

    assert llm_backend_kinds() == tuple(dict.fromkeys(n.partition(":")[0] for n in BACKENDS.names()))
    assert {"embedded", "ollama", "openai"} <= set(llm_backend_kinds())

    @BACKENDS.register("vllm-test")
    class Backend:
        pass

    try:
        args = build_parser().parse_args(["llm", "purge", "--backend", "vllm-test", "--model", "m"])
        assert args.backend == "vllm-test"
    finally:
        BACKENDS.forget("vllm-test")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["llm", "purge", "--backend", "vllm-test", "--model", "m"])
