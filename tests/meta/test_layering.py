"""The dependency direction is one-way: pages -> ltr | pipeline -> core.

Checked on the import statements of every module, so a page-only dependency (streamlit) or a
cross-study import cannot creep into the libraries unnoticed.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

FORBIDDEN = {
    "core": {"streamlit", "ltr", "pipeline", "pages"},
    "ltr": {"streamlit", "pipeline", "pages"},
    "pipeline": {"streamlit", "ltr", "pages"},
}


def imported_top_level_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_library_packages_do_not_import_upwards_or_sideways(package):
    offenders = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_top_level_modules(path) & FORBIDDEN[package]
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert not offenders, f"forbidden imports: {offenders}"


def test_the_checker_sees_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import streamlit as st\nfrom ltr.store import RunStore\nfrom . import x\n")
    assert imported_top_level_modules(sample) == {"streamlit", "ltr"}
