"""The tests mirror the packages (issue 27, item 6): each test module sits in the folder of what it tests
(``tests/core/``, ``tests/ltr/[<package>/]``, ``tests/pipeline/<stage>/``, ``tests/pages/``,
``tests/browser/``; these checks themselves in ``tests/meta/``), and no test module imports another one:
what several modules share is a fixture in their folder's ``conftest.py`` or a plain helper in a
non-test module (``tests/support/``, ``tests/<folder>/support.py``).

Read from the source text, so an import inside a function or in the code a test runs in a child process
counts too."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT, TESTS

# top-level test folders -> the package whose sub-packages their sub-folders mirror (None: flat folder)
AREAS = {"core": "core", "ltr": "ltr", "pipeline": "pipeline", "pages": None, "browser": None, "meta": None}
# pipeline's modules are all in its stage packages: its tests are too
NEEDS_SUBFOLDER = {"pipeline"}
# ``from tests.x.test_y import ...``, ``import tests.x.test_y``, ``from tests.x import test_y``, and a conftest
TEST_MODULE_IMPORT = re.compile(r"^\s*(?:from\s+tests(?:\.\w+)*\.(?:test_\w+|conftest)\s+import"
                                r"|import\s+tests(?:\.\w+)*\.(?:test_\w+|conftest)\b"
                                r"|from\s+tests(?:\.\w+)*\s+import\s+.*\b(?:test_\w+|conftest)\b)", re.M)


def _test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def misplaced(path: Path) -> str | None:
    """Why ``path`` (a test module) is not where the layout puts it, or None."""
    parts = path.relative_to(TESTS).parts
    if len(parts) == 1:
        return "at the root of tests/ (put it in the folder of what it tests)"
    area, folders = parts[0], parts[1:-1]
    if area not in AREAS:
        return f"in tests/{area}/, which is none of {', '.join(f'tests/{a}/' for a in AREAS)}"
    package = AREAS[area]
    if package is None:
        return f"in a sub-folder of tests/{area}/ (keep it flat)" if folders else None
    if area in NEEDS_SUBFOLDER and not folders:
        return f"directly in tests/{area}/ (put it in tests/{area}/<stage>/ of the sub-package it tests)"
    mirrored = ROOT / package / Path(*folders) if folders else ROOT / package
    if not (mirrored / "__init__.py").is_file():
        return f"in tests/{'/'.join(parts[:-1])}/, but {mirrored.relative_to(ROOT)}/ is not a package"
    return None


def test_the_tests_live_in_the_folders_that_mirror_the_packages():
    wrong = {str(p.relative_to(ROOT)): why for p in _test_modules() if (why := misplaced(p))}
    assert not wrong, wrong


def test_every_test_folder_is_a_package():
    """Module names come from the package path (``tests.ltr.test_cli`` and ``tests.pipeline.cli.test_cli``
    may then share a file name), and ``from tests.<folder>.support import ...`` resolves."""
    folders = {p.parent for p in _test_modules()} | {p.parent for p in TESTS.rglob("support.py")}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders
                     for d in [f, *f.relative_to(TESTS).parents] if not (TESTS / d / "__init__.py").is_file())
    assert not missing, f"no __init__.py in {sorted(set(missing))}"


def test_no_test_module_imports_another_test_module():
    offenders = {str(p.relative_to(ROOT)): match.group(0).strip()
                 for p in sorted(TESTS.rglob("*.py")) if (match := TEST_MODULE_IMPORT.search(p.read_text()))}
    assert not offenders, offenders


@pytest.mark.parametrize("source, imports", [
    ("from tests.test_train import tiny_data\n", True),
    ("    from tests.ltr.train.test_train import split_letor_by_query\n", True),
    ("import tests.browser.test_browser_e2e\n", True),
    ("from tests.pages import test_pages\n", True),
    ("from tests.conftest import SHARED\n", True),
    ("from tests.ltr.support import split_letor_by_query\n", False),
    ("from tests.support.loopback_llm import LoopbackLLMServer\n", False),
    ('"""the check is tests/test_x.py::test_y"""\n', False),
])
def test_the_import_check_tells_a_test_module_import_from_a_helper_import(source, imports):
    assert bool(TEST_MODULE_IMPORT.search(source)) is imports


@pytest.mark.parametrize("relative, wrong", [
    ("test_x.py", "at the root"),
    ("misc/test_x.py", "none of"),
    ("pipeline/test_x.py", "directly in tests/pipeline/"),
    ("pipeline/nosuchstage/test_x.py", "not a package"),
    ("pages/deep/test_x.py", "keep it flat"),
    ("pipeline/retrieval/test_x.py", None),
    ("ltr/test_x.py", None),
    ("ltr/losses/test_x.py", None),
])
def test_the_layout_check_names_what_is_wrong(relative, wrong):
    why = misplaced(TESTS / relative)
    assert (why is None) if wrong is None else (wrong in why), why


# a test module named in the docs, the code's docstrings or the tests' own text, as ``tests/<path>.py``
NAMED_TEST_PATH = re.compile(r"\btests/(?:[\w-]+/)*[\w-]+\.py\b")
NAMING_FILES = ("README.md", "docs/*.md", "core/**/*.py", "ltr/**/*.py", "pipeline/**/*.py", "pages/**/*.py",
                "tests/**/*.py", "tests/**/*.md", "bench/**/*.py")


def test_every_test_path_named_in_docs_and_code_exists():
    """A moved or renamed test module leaves no reader looking for a file that is not there."""
    stale = {}
    for pattern in NAMING_FILES:
        for path in ROOT.glob(pattern):
            if path.name == "make_old_stores.py" or path == Path(__file__):  # 20028e0's layout; examples
                continue
            named = {m.group(0) for m in NAMED_TEST_PATH.finditer(path.read_text())}
            missing = sorted(n for n in named if not (ROOT / n).is_file())
            if missing:
                stale[str(path.relative_to(ROOT))] = missing
    assert not stale, stale


# a file or folder of the checkout, as the map writes it: `ltr/losses/`, `pipeline/study/task.py`
MAP_PATH = re.compile(r"`((?:app\.py|core|ltr|pipeline|pages|tests|bench|docs)(?:/[\w.-]+)*/?)`")


def test_every_path_the_map_and_the_readme_name_exists():
    """docs/ARCHITECTURE.md is the project's map (issue 27, item 8): a module moved or renamed leaves no
    entry pointing at nothing (placeholders such as ``ltr/losses/<name>.py`` are not paths)."""
    documents = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]  # + the guides
    missing = {doc: sorted({p for p in MAP_PATH.findall((ROOT / doc).read_text()) if not (ROOT / p).exists()})
               for doc in documents}
    assert not any(missing.values()), missing
