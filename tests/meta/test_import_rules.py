"""The import rules of ``pipeline/`` (issue 20): no circle among its modules, each package imports only
the packages above it in the map of ``pipeline/__init__.py``, pages use only ``pipeline.views`` and
``pipeline.study``, and no library (``core``, ``ltr``, ``pipeline``) imports ``streamlit``.

Read from the source (ast), module-level imports and those inside functions alike: a function-level
import is still a dependency, only a later one.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PIPELINE = ROOT / "pipeline"
# the order a reader meets the stages: a package may import only packages before it
ORDER = ("stats", "data", "llm", "sets", "retrieval", "generation", "judging", "typology", "annotation",
         "prompting", "study", "aware", "predict", "findings", "export", "views", "cli")
PAGE_MAY_IMPORT = ("views", "study")
# packages that re-export their modules' names (their __init__ was so before issue 20)
RE_EXPORTING = ("pipeline.llm",)


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def pipeline_modules(root: Path = ROOT, package: str = "pipeline") -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}


def imported_names(path: Path, root: Path = ROOT) -> list[tuple[int, str, tuple[str, ...]]]:
    """``(line, module, names)`` of every import in ``path`` (any depth), relative ones made absolute."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, ()) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module, tuple(a.name for a in node.names)))
    return out


def pipeline_dependencies(path: Path, modules: dict[str, Path], root: Path = ROOT,
                          package: str = "pipeline") -> list[tuple[int, str]]:
    """``(line, pipeline module)`` that ``path`` imports: ``from pipeline.x import y`` is ``pipeline.x.y``
    when that is a module, else ``pipeline.x``."""
    out = []
    for line, module, names in imported_names(path, root):
        if module != package and not module.startswith(package + "."):
            continue
        targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in modules]
        if len(targets) < len(names) or not names:
            targets.append(module)
        out.extend((line, t) for t in targets if t in modules)
    return out


def package_of(module: str) -> str | None:
    """``pipeline.sets.rule`` -> ``sets``; None for ``pipeline`` and ``pipeline.__main__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] != "__main__" else None


def graph(root: Path = ROOT, package: str = "pipeline") -> dict[str, set[str]]:
    modules = pipeline_modules(root, package)
    return {m: {t for _, t in pipeline_dependencies(p, modules, root, package) if t != m} for m, p in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("package", ["pipeline", "ltr"])
def test_no_import_circle_among_pipeline_modules(package):
    """ltr too since issue 41: ltr.gbdt and ltr.train imported each other (gbdt <-> train.config, and
    gbdt.lambdamart -> train.run -> gbdt.lambdamart); the tree ranker's trainer now only boosts and ltr.train
    stores and tests it."""
    found = circles(graph(package=package))
    assert not found, "import circles (module level or inside functions): " + "; ".join(
        " <-> ".join(c) for c in found)


def test_every_pipeline_module_lives_in_a_package_of_the_map():
    stray = [m for m in pipeline_modules() if m not in ("pipeline", "pipeline.__main__")
             and package_of(m) not in ORDER]
    assert not stray, f"modules outside the packages of the map {ORDER}: {stray}"


def test_packages_import_only_packages_above_them():
    modules = pipeline_modules()
    wrong = []
    for module, path in modules.items():
        mine = package_of(module)
        if mine not in ORDER:
            continue
        for line, target in pipeline_dependencies(path, modules):
            theirs = package_of(target)
            if theirs is None or theirs == mine:
                continue
            if theirs not in ORDER or ORDER.index(theirs) > ORDER.index(mine):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {mine} imports {target}")
    assert not wrong, "imports against the package order " + " -> ".join(ORDER) + ":\n" + "\n".join(wrong)


def test_entry_point_imports_only_the_cli():
    modules = pipeline_modules()
    targets = {package_of(t) for _, t in pipeline_dependencies(PIPELINE / "__main__.py", modules)}
    assert targets <= {"cli"}, f"pipeline/__main__.py imports {targets}"


def page_files() -> list[Path]:
    return sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]


@pytest.mark.parametrize("path", page_files(), ids=lambda p: p.name)
def test_pages_use_only_views_and_study(path):
    modules = pipeline_modules()
    wrong = [f"{path.relative_to(ROOT)}:{line}: {target}" for line, target in pipeline_dependencies(path, modules)
             if package_of(target) not in PAGE_MAY_IMPORT]
    assert not wrong, f"a page imports pipeline.views (or pipeline.study), nothing else of pipeline: {wrong}"


def test_no_streamlit_below_pages():
    """The libraries (core, ltr, pipeline) never import streamlit; benchmarks drive pages through
    ``streamlit.testing`` only. (Tests drive the pages and may use streamlit.)"""
    wrong = []
    for top in ("core", "ltr", "pipeline", "bench"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for line, module, names in imported_names(path):
                if module != "streamlit" and not module.startswith("streamlit."):
                    continue
                if top == "bench" and module.startswith("streamlit.testing"):
                    continue
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {module}")
    assert not wrong, f"streamlit imported below pages/: {wrong}"


def test_package_inits_open_with_a_docstring_and_hold_no_re_exports():
    """A re-export is a name an ``__init__`` imports and does not use itself (``pipeline.cli``'s
    ``__init__`` holds ``main`` and uses what it imports)."""
    wrong = []
    for init in sorted(PIPELINE.rglob("__init__.py")):
        module = module_name(init)
        tree = ast.parse(init.read_text())
        if not ast.get_docstring(tree):
            wrong.append(f"{module}: no docstring")
        if module in RE_EXPORTING:
            continue
        imported = set()
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", "") != "__future__":
                imported.update((a.asname or a.name).split(".")[0] for a in node.names)
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if imported - used:
            wrong.append(f"{module}: re-exports {sorted(imported - used)}")
    assert not wrong, wrong


def test_the_checker_sees_function_level_relative_and_from_package_imports(tmp_path):
    folder = tmp_path / "pipeline" / "a"
    folder.mkdir(parents=True)
    (tmp_path / "pipeline" / "__init__.py").write_text("")
    (folder / "__init__.py").write_text("")
    (folder / "x.py").write_text("def f():\n    from . import y\n    from pipeline.a.y import g\n")
    (folder / "y.py").write_text("from pipeline.a import x\n")
    edges = graph(tmp_path)
    assert edges["pipeline.a.x"] == {"pipeline.a.y"} and edges["pipeline.a.y"] == {"pipeline.a.x"}
    assert circles(edges) == [["pipeline.a.x", "pipeline.a.y"]]


def cli_modules(root: Path = ROOT) -> list[Path]:
    """The modules of both command lines (``ltr/cli.py`` or the ``ltr/cli/`` package, ``pipeline/cli/``)."""
    return sorted([*(root / "ltr").glob("cli.py"), *(root / "ltr" / "cli").rglob("*.py"),
                   *(root / "pipeline" / "cli").rglob("*.py")])


def views_imports(path: Path, root: Path = ROOT) -> list[str]:
    """The ``ltr.views`` / ``pipeline.views`` modules (or names of them) that ``path`` imports."""
    return [f"{line}: {module}" + (f" ({', '.join(names)})" if names else "")
            for line, module, names in imported_names(path, root)
            if re.match(r"(ltr|pipeline)\.views(\.|$)", module)
            or (module in ("ltr", "pipeline") and "views" in names)]


def test_no_cli_module_imports_a_view():
    """A page helper is not a CLI's dependency: what both need lives in the library
    (``pipeline.annotation.typology_items.sample_items``, once in ``pipeline.views.failure_typology``)."""
    modules = cli_modules()
    assert any(p.parent.name == "cli" and p.name == "annotation.py" for p in modules)
    wrong = [f"{p.relative_to(ROOT)}:{hit}" for p in modules for hit in views_imports(p)]
    assert not wrong, f"CLI modules importing views: {wrong}"


def test_the_view_import_checker_sees_function_level_and_package_imports(tmp_path):
    (tmp_path / "pipeline" / "cli").mkdir(parents=True)
    sample = tmp_path / "pipeline" / "cli" / "x.py"
    sample.write_text("def f():\n    from pipeline.views.failure_typology import sample_items\n"
                      "from pipeline import views\nfrom pipeline.study import run\n")
    assert sorted(views_imports(sample, tmp_path)) == ["2: pipeline.views.failure_typology (sample_items)", "3: pipeline (views)"]
