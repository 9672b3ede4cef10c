"""Compile exported LaTeX with the system's pdflatex (Debian's texlive packages, installed by ``.ci/run``)
and read what a reader would see: the PDF's text (``pdftotext``), its pages as PNG (``pdftoppm``) and the
overfull boxes the log reports. Tests that use it skip when pdflatex is absent (``needs_pdflatex``)."""
from __future__ import annotations

import os
import re
import zlib
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
# what core.export.booktabs writes to the log for every table it sets (compile_tex keeps log lines whole)
TABLE = re.compile(r"^Exported table (.*?): width ([\d.]+)pt on a line of ([\d.]+)pt, type ([\d.]+) ?pt$", re.M)
# what core.export.figure_latex writes to the log for every figure it includes
FIGURE = re.compile(r"^Exported figure (.*?): width ([\d.]+)pt on a line of ([\d.]+)pt$", re.M)
FOOTNOTESIZE_PT = 8.0  # \footnotesize of a 10pt article, the preview's class
LEAST_SCALE = 0.85  # what a journal takes: a table scaled further is unreadable


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

    def tables(self) -> list[dict]:
        """Every table core.export.booktabs set, as its log line states it: label, natural width, the line it
        stands on, type size, and the scale it was set at (1 unless wider than the line)."""
        found = []
        for m in TABLE.finditer(self.log):
            width, line, size = float(m.group(2)), float(m.group(3)), float(m.group(4))
            found.append({"table": m.group(1), "width": width, "line": line, "size": size,
                          "scale": min(1.0, line / width) if width else 1.0})
        return found

    def scaled_under(self, least: float = LEAST_SCALE) -> list[dict]:
        """The tables set at a scale under ``least`` (shrunk to fit their line)."""
        return [t for t in self.tables() if t["scale"] < least]

    def type_under(self, least_pt: float = FOOTNOTESIZE_PT) -> list[dict]:
        """The tables whose type, after any scaling, is smaller than ``least_pt`` (\\footnotesize)."""
        return [t for t in self.tables() if t["size"] * t["scale"] < least_pt - 1e-6]

    def figures(self) -> list[dict]:
        """Every figure core.export.figure_latex included, as its log line states it (file, the width it was
        set at, the line) with what its PDF says: natural width (MediaBox, in TeX points), the scale it was
        set at, and its smallest and every font size as set and as printed (times the scale)."""
        found = []
        for m in FIGURE.finditer(self.log):
            pdf = self.pdf.parent / m.group(1)
            natural, sizes = pdf_page_width_and_font_sizes(pdf)
            scale = float(m.group(2)) / natural if natural else 1.0
            found.append({"figure": m.group(1), "width": float(m.group(2)), "line": float(m.group(3)),
                          "natural": natural, "scale": scale, "sizes": sizes,
                          "smallest": min(sizes) * scale if sizes else None})
        return found

    def figure_type_under(self, least_pt: float = FOOTNOTESIZE_PT) -> list[dict]:
        """The figures with text smaller than ``least_pt`` where they are included (their font sizes times
        the scale they were set at)."""
        return [f for f in self.figures() if f["smallest"] is not None and f["smallest"] < least_pt - 0.05]

    def publishable(self) -> list[str]:
        """What a journal would refuse: floats taller than the page, tables scaled under 0.85, type under
        \\footnotesize in a table or a figure (empty when none)."""
        return [*self.too_large(), *(f"scaled to {t['scale']:.2f}: {t['table']}" for t in self.scaled_under()),
                *(f"type {t['size'] * t['scale']:.1f} pt: {t['table']}" for t in self.type_under()),
                *(f"figure type {f['smallest']:.1f} pt: {f['figure']}" for f in self.figure_type_under())]

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


_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
_FONT_SIZE = re.compile(rb"/[\w.+-]+\s+([\d.]+)\s+Tf")
_MEDIA_BOX = re.compile(rb"/MediaBox\s*\[\s*([-\d.]+)\s+[-\d.]+\s+([-\d.]+)")


def pdf_page_width_and_font_sizes(pdf: Path) -> tuple[float, list[float]]:
    """A one-page PDF's width in TeX points (its MediaBox, in PostScript points) and the size of every font
    its content streams set (each ``/F size Tf``, Flate-compressed streams inflated): what matplotlib writes,
    whose text matrices only rotate."""
    data = pdf.read_bytes()
    box = _MEDIA_BOX.search(data)
    width = (float(box.group(2)) - float(box.group(1))) * 72.27 / 72 if box else 0.0
    sizes = []
    for stream in _STREAM.findall(data):
        try:
            stream = zlib.decompress(stream)
        except zlib.error:
            pass
        sizes += [float(size) for size in _FONT_SIZE.findall(stream)]
    return width, sizes


def compile_tex(folder: Path, name: str) -> Compiled:
    """``pdflatex`` on ``folder/name`` (one pass: the tests read text and boxes, not resolved references);
    fails the test with the log's tail when it does not compile."""
    # max_print_line (kpathsea reads it from the environment): log lines whole, not broken at 79 characters
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name], cwd=folder,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "max_print_line": "10000"})
    log_file = folder / (Path(name).stem + ".log")
    log = log_file.read_text(errors="replace") if log_file.exists() else result.stdout
    if result.returncode != 0:
        pytest.fail(f"pdflatex {name} failed:\n{log[-3000:]}")
    return Compiled(folder / (Path(name).stem + ".pdf"), log)
