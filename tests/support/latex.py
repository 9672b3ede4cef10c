"""Compile exported LaTeX with the system's pdflatex (Debian's texlive packages, installed by ``.ci/run``)
and read what a reader would see: the PDF's text (``pdftotext``), its pages as PNG (``pdftoppm``) and the
overfull boxes the log reports. Tests that use it skip when pdflatex is absent (``needs_pdflatex``)."""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

PDFLATEX = shutil.which("pdflatex") is not None and shutil.which("pdftotext") is not None
needs_pdflatex = pytest.mark.skipif(not PDFLATEX, reason="pdflatex/pdftotext not installed (texlive-latex-base, poppler-utils)")

OVERFULL = re.compile(r"^Overfull \\[hv]box \((\d+(?:\.\d+)?)pt too (?:wide|high)\)(.*)$", re.M)
# a table or figure taller than the page: LaTeX prints it running off the page's bottom
TOO_LARGE = re.compile(r"^LaTeX Warning: Float too large for page by .*$", re.M)


@dataclass
class Compiled:
    pdf: Path
    log: str

    def overfull(self, over: float = 0.0) -> list[str]:
        """The log's overfull boxes wider (or higher) than ``over`` points, as the log states them."""
        return [m.group(0) for m in OVERFULL.finditer(self.log) if float(m.group(1)) > over]

    def too_large(self) -> list[str]:
        """The log's floats taller than the page, as the log states them."""
        return TOO_LARGE.findall(self.log)

    def text(self) -> str:
        return subprocess.run(["pdftotext", "-layout", str(self.pdf), "-"], capture_output=True, text=True,
                              check=True, timeout=60).stdout

    def pages(self) -> int:
        return self.text().count("\f")

    def pngs(self, out: Path, dpi: int = 60) -> list[Path]:
        """Every page as ``out/<stem>-N.png`` (pdftoppm), for a reader to look at."""
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(["pdftoppm", "-png", "-r", str(dpi), str(self.pdf), str(out / self.pdf.stem)], check=True,
                       timeout=120)
        return sorted(out.glob(f"{self.pdf.stem}-*.png"))


def compile_tex(folder: Path, name: str) -> Compiled:
    """``pdflatex`` on ``folder/name`` (one pass: the tests read text and boxes, not resolved references);
    fails the test with the log's tail when it does not compile."""
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name], cwd=folder,
                            capture_output=True, text=True, timeout=120)
    log_file = folder / (Path(name).stem + ".log")
    log = log_file.read_text(errors="replace") if log_file.exists() else result.stdout
    if result.returncode != 0:
        pytest.fail(f"pdflatex {name} failed:\n{log[-3000:]}")
    return Compiled(folder / (Path(name).stem + ".pdf"), log)
