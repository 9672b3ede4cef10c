"""The Training page lists losses and rankers without importing torch (it only submits jobs: the job's
own process trains), so opening it never pays torch's import."""
from __future__ import annotations

import ast
import subprocess
import sys

from core.paths import PROJECT_ROOT


def _module_imports(page: str) -> str:
    """The page's module-level import statements, as source."""
    tree = ast.parse((PROJECT_ROOT / "pages" / page).read_text())
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))


def test_the_training_page_imports_no_torch():
    imports = _module_imports("training.py")
    assert "ltr.losses" in imports and "ltr.rankers" in imports  # what it lists comes from the registries
    code = f"import sys\n{imports}\nassert LOSS_NAMES and RANKER_NAMES\nprint('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
