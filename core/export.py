"""Publication files, shared by both studies' exports (``python -m pipeline export``, ``python -m ltr
export``) and the pages' download buttons: figures as SVG (text kept as text), PDF and PNG, tables as
CSV and booktabs LaTeX, and a ``manifest.json`` saying what each file is and what made it.

Offline by construction: matplotlib renders every format itself (no browser, nothing downloaded).
SVG is written with ``svg.fonttype = "none"``, so labels stay ``<text>`` elements a vector editor can
edit; PDF embeds TrueType fonts (``pdf.fonttype = 42``), so its text stays text too.
"""
from __future__ import annotations

import io
import json
import re
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from core.atomic import atomic_write, atomic_write_text

FIGURE_FORMATS = ("svg", "pdf", "png")
RC = {"svg.fonttype": "none", "pdf.fonttype": 42, "ps.fonttype": 42}
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def git_state(root: Path = PROJECT_ROOT) -> dict:
    """The commit of the code that made the files, and whether tracked files had changes."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                    capture_output=True, text=True, check=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": dirty}


def slug(text: str) -> str:
    """A file-name part: ``bm25 | planted | llama-3.3-70b | binary`` -> ``bm25_planted_llama-3.3-70b_binary``."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", str(text)).strip("_") or "x"


def figure_bytes(fig, fmt: str, title: str = "") -> bytes:
    """One matplotlib figure in ``fmt`` (svg, pdf or png), text kept as text (module docstring); ``title``
    (the configuration) goes into the file's metadata too (SVG ``<title>``, PDF Info ``/Title``)."""
    import matplotlib

    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"unknown figure format {fmt!r}; use one of {', '.join(FIGURE_FORMATS)}")
    buffer = io.BytesIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buffer, format=fmt, dpi=200 if fmt == "png" else None, bbox_inches="tight",
                    metadata={"Title": title or None} if fmt in ("pdf", "svg") else None)
    return buffer.getvalue()


# Every character that LaTeX reads as markup, and the symbols the tables and captions use, as text pdflatex
# sets with its default fonts (no package needed): ``<``, ``>`` and ``|`` print as ¡, ¿ and — in the
# default OT1 encoding, so they go through \textless etc. A character not listed here and outside Latin-1
# is written as its code point (``[U+2211]``): the file still compiles, and the reader sees it was there.
LATEX_CHARACTERS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "|": r"\textbar{}", "∩": r"$\cap$", "∪": r"$\cup$", "→": r"$\to$", "←": r"$\leftarrow$",
    "τ": r"$\tau$", "θ": r"$\theta$", "α": r"$\alpha$", "ρ": r"$\rho$", "σ": r"$\sigma$", "μ": r"$\mu$",
    "·": r"$\cdot$", "†": r"$^\dagger$", "‡": r"$^\ddagger$", "≥": r"$\geq$", "≤": r"$\leq$", "≠": r"$\neq$",
    "≈": r"$\approx$", "±": r"$\pm$", "×": r"$\times$", "−": "-", "–": "--", "—": "---", "…": r"\ldots{}",
    "₀": r"$_0$", "²": r"$^2$", "∞": r"$\infty$", "“": "``", "”": "''", "‘": "`", "’": "'", "\u00a0": "~",
}


def latex_text(value) -> str:
    """``value`` as LaTeX text: the one escaping function of every exported ``.tex`` (tables, captions,
    notes) and of ``ltr report --latex``; see :data:`LATEX_CHARACTERS`."""
    out = []
    for char in str(value):
        if char in LATEX_CHARACTERS:
            out.append(LATEX_CHARACTERS[char])
        elif ord(char) > 0xFF:
            out.append(f"[U+{ord(char):04X}]")
        else:
            out.append(char)
    return "".join(out)


def _missing(value) -> bool:
    import math

    return value is None or (isinstance(value, float) and math.isnan(value))


def format_p(p, floor: float = 1e-3) -> str:
    """A p-value as a paper prints it (plain text): ``< 0.001`` under ``floor``, otherwise two significant
    digits (``0.042``, ``0.50``, ``0.0042``); ``--`` when missing. The CSV keeps the exact value."""
    import math

    if _missing(p):
        return "--"
    p = float(p)
    if p < floor:
        return f"< {floor:g}"
    return f"{p:.{max(2, 1 - math.floor(math.log10(p)))}f}"


def format_number(value, digits: int = 3) -> str:
    """A table's number (plain text): ``digits`` decimals, an integer as it is, a value too small for
    ``digits`` decimals with two significant digits in scientific form (``1.9e-19``), ``--`` when missing."""
    import numbers

    if _missing(value):
        return "--"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if value != 0 and abs(value) < 0.5 * 10 ** -digits:
        return f"{value:.1e}"
    return f"{value:.{digits}f}"


_P_COLUMN = re.compile(r"(^|(?<!top)[_ ])p($|[_@ ])|p_value|p-value", re.I)  # not an LLM option's top_p


def is_p_column(name: str) -> bool:
    """Whether a column holds p-values (``p``, ``p@10``, ``p_holm@10``, ``kendall_p_holm``, ``pearson_p``,
    ``p_hypergeometric``): :func:`latex_cell` prints them with :func:`format_p`."""
    return bool(_P_COLUMN.search(str(name)))


def latex_cell(value, column: str = "", digits: int = 3) -> str:
    """One table cell as LaTeX: p-values by :func:`format_p`, numbers by :func:`format_number`, text by
    :func:`latex_text` (the scientific form ``1.9e-19`` as :math:`1.9\\times10^{-19}`)."""
    import numbers

    if not _missing(value) and not isinstance(value, bool) and isinstance(value, numbers.Real):
        text = format_p(value) if is_p_column(column) else format_number(value, digits)
        mantissa, e, exponent = text.partition("e")
        if e:
            return rf"${mantissa}\times10^{{{int(exponent)}}}$"
        return latex_text(text)
    if _missing(value) or isinstance(value, bool):
        return format_number(value)
    return latex_text(value)


WRAP_AT = 24  # a text column whose longest cell is longer than this wraps (a p{} column)
NUMERIC_HEADER_WIDTH = 10  # a longer header of a narrow column is stacked on lines of its words
LINE_CHARS = 84  # characters of \footnotesize text across an A4 article's text width (345 pt / ~4.1 pt)
SEP_CHARS = 3  # the space between two columns (2 \tabcolsep = 12 pt), in characters


def _header_lines(name: str, stacked: bool) -> list[str]:
    words = str(name).replace("_", " ").split()
    if not stacked or len(" ".join(words)) <= NUMERIC_HEADER_WIDTH or len(words) < 2:
        return [" ".join(words)]
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > NUMERIC_HEADER_WIDTH:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line]


def _header(lines: list[str]) -> str:
    if len(lines) == 1:
        return latex_text(lines[0])
    return r"\begin{tabular}[b]{@{}c@{}}" + r"\\".join(latex_text(x) for x in lines) + r"\end{tabular}"


def _plain_cell(value, column: str, digits: int) -> str:
    import numbers

    if not _missing(value) and not isinstance(value, bool) and isinstance(value, numbers.Real):
        return format_p(value) if is_p_column(column) else format_number(value, digits)
    return format_number(value) if _missing(value) or isinstance(value, bool) else str(value)


def _column_specs(frame, digits: int) -> tuple[list[str], list[list[str]]]:
    """Each column's LaTeX spec and header lines: numbers right-aligned, short text ``l``, long text a
    ragged-right ``p{}`` column that wraps, its width a share of what the other columns leave of the line
    (at least :data:`WRAP_AT` characters and its longest word)."""
    natural, headers, wrapping = [], [], []
    for column in frame.columns:
        cells = [_plain_cell(v, column, digits) for v in frame[column]]
        longest = max((len(c) for c in cells), default=0)
        numeric = frame[column].dtype.kind in "iuf"
        wraps = not numeric and longest > WRAP_AT
        lines = _header_lines(column, stacked=not wraps)
        words = max((len(w) for c in cells for w in c.split()), default=0)
        natural.append(max(longest, *(len(x) for x in lines)) if not wraps else longest)
        headers.append(lines)
        wrapping.append((wraps, max(words, *(len(w) for x in lines for w in x.split()), WRAP_AT)))
    fixed = sum(n for n, (w, _) in zip(natural, wrapping) if not w) + SEP_CHARS * len(natural)
    wrapped = [i for i, (w, _) in enumerate(wrapping) if w]
    room = max(LINE_CHARS - fixed, 0)
    total = sum(natural[i] for i in wrapped) or 1
    specs = []
    for i, column in enumerate(frame.columns):
        if i in wrapped:
            chars = min(natural[i], max(wrapping[i][1], int(room * natural[i] / total)))
            specs.append(rf">{{\raggedright\arraybackslash}}p{{{0.5 * chars:.1f}em}}")
        else:
            specs.append("r" if frame[column].dtype.kind in "iuf" else "l")
    return specs, headers


def booktabs(frame, caption: str, label: str = "", digits: int = 3, notes: Sequence[str] = ()) -> str:
    """``frame`` as a booktabs table that fits the text width of an A4 page: text columns with long cells
    wrap (ragged-right ``p{}`` columns sharing what the other columns leave of the line), and a table still
    wider than the text (many numeric columns) is scaled down to it, never up; every cell, the caption and
    the ``notes`` (lines under the table: what a mark means, where the full text is) through
    :func:`latex_cell`/:func:`latex_text`; floats to ``digits`` places, p-values as ``< 0.001`` or two
    significant digits. Needs ``array``, ``booktabs`` and ``graphicx`` (:data:`LATEX_PACKAGES`)."""
    specs, headers = _column_specs(frame, digits)
    header = " & ".join(_header(lines) for lines in headers) + r" \\"
    body = [" & ".join(latex_cell(v, c, digits) for v, c in zip(row, frame.columns)) + r" \\"
            for row in frame.itertuples(index=False)]
    lines = [r"\begin{table}[tbp]", r"\centering", r"\footnotesize", rf"\caption{{{latex_text(caption)}}}"]
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
              r"\begin{tabular}{" + "".join(specs) + "}", r"\toprule", header, r"\midrule", *body, r"\bottomrule",
              r"\end{tabular}}"]
    if notes:
        lines += [r"\par\smallskip", r"\parbox{\linewidth}{\raggedright " + " ".join(latex_text(n) for n in notes)
                  + "}"]
    lines += [r"\end{table}", ""]
    return "\n".join(lines)


def figure_latex(stem: str, caption: str, label: str = "") -> str:
    """A figure environment for ``stem.pdf``: the figure at the text width (never taller than most of the
    page), ``caption`` (the configuration that made it) and ``\\label{fig:stem}``."""
    return "\n".join([r"\begin{figure}[tbp]", r"\centering",
                      rf"\includegraphics[width=\linewidth,height=0.7\textheight,keepaspectratio]{{{stem}.pdf}}",
                      rf"\caption{{{latex_text(caption)}}}", rf"\label{{{label or 'fig:' + stem}}}",
                      r"\end{figure}", ""])


LATEX_PACKAGES = ("array", "booktabs", "graphicx")


def latex_document(inputs: Sequence[str]) -> str:
    """An A4 article that ``\\input``s each of ``inputs`` (the export's tables and figures): what
    ``preview.tex`` is, and what shows that every file compiles as a paper would include it."""
    return "\n".join([r"\documentclass[a4paper,10pt]{article}", r"\usepackage[T1]{fontenc}",
                      r"\usepackage{" + ",".join(LATEX_PACKAGES) + "}", r"\begin{document}",
                      *(rf"\input{{{name}}}" + "\n" + r"\clearpage" for name in inputs), r"\end{document}", ""])


def file_sha256(path: str | Path) -> str | None:
    """The sha256 of a file's bytes (None when it is not a readable file)."""
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


@dataclass
class Export:
    """The files of one export folder and what each is; ``manifest()`` is ``manifest.json``.

    Every figure comes with ``<stem>.tex`` (a figure environment: the PDF, its caption, ``\label{fig:stem}``),
    every table with ``<stem>.csv`` and ``<stem>.tex``; ``write_manifest`` also writes ``preview.tex``, an
    A4 document that ``\input``s them all (``pdflatex preview.tex`` shows the export as a paper prints it).
    ``input_file`` records an input file with its sha256 (``inputs`` in the manifest)."""
    folder: Path
    provenance: dict  # study / run ids, models with digests, configuration
    files: list[dict] = field(default_factory=list)
    not_written: list[dict] = field(default_factory=list)
    inputs: list[dict] = field(default_factory=list)
    latex: list[str] = field(default_factory=list)  # the .tex files preview.tex inputs, in order

    def __post_init__(self):
        self.folder = Path(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _add(self, name: str, what: str, data: bytes | str, **extra) -> Path:
        path = self.folder / name
        if isinstance(data, str):
            atomic_write_text(path, data)
        else:
            atomic_write(path, lambda tmp: tmp.write_bytes(data))
        self.files.append({"file": name, "what": what, **extra})
        return path

    def figure(self, fig, stem: str, what: str, caption: str, formats: Sequence[str] = FIGURE_FORMATS,
               **extra) -> list[Path]:
        """Write ``fig`` as ``stem.svg``, ``stem.pdf``, ``stem.png`` and ``stem.tex`` (its LaTeX figure:
        ``caption``, the configuration that made it, which the files' metadata title carries too) and
        close it. The figure's own title stays short; the caption is where the configuration goes."""
        import matplotlib.pyplot as plt

        try:
            paths = [self._add(f"{stem}.{fmt}", what, figure_bytes(fig, fmt, caption), format=fmt, caption=caption,
                               **extra) for fmt in formats]
        finally:
            plt.close(fig)
        if "pdf" in formats:
            paths.append(self._add(f"{stem}.tex", what, figure_latex(stem, caption), format="latex", caption=caption,
                                   label=f"fig:{stem}", **extra))
            self.latex.append(f"{stem}.tex")
        return paths

    def table(self, frame, stem: str, what: str, caption: str, notes: Sequence[str] = (), latex_frame=None,
              **extra) -> list[Path]:
        """Write ``frame`` as ``stem.csv`` and the booktabs ``stem.tex`` (caption = configuration; ``notes``:
        lines under the table; ``latex_frame``: the columns a paper prints, when they differ from the CSV's)."""
        shown = frame if latex_frame is None else latex_frame
        paths = [self._add(f"{stem}.csv", what, frame.to_csv(index=False), format="csv", **extra),
                 self._add(f"{stem}.tex", what, booktabs(shown, caption, label=f"tab:{stem}", notes=notes),
                           format="latex", caption=caption, label=f"tab:{stem}", **extra)]
        self.latex.append(f"{stem}.tex")
        return paths

    def latex_table(self, stem: str, what: str, tex: str, caption: str, **extra) -> Path:
        """A LaTeX table made elsewhere (from :func:`booktabs`), labelled ``tab:<stem>``."""
        self.latex.append(f"{stem}.tex")
        return self._add(f"{stem}.tex", what, tex, format="latex", caption=caption, label=f"tab:{stem}", **extra)

    def text(self, name: str, what: str, text: str, **extra) -> Path:
        return self._add(name, what, text, **extra)

    def input_file(self, role: str, path: str | Path | None, **extra) -> None:
        """Record an input file (an imported run, judgments, answers, qrels, a LETOR file) with the sha256 of
        its bytes as they are now (``sha256`` None and ``missing`` True when it cannot be read any more)."""
        if not path:
            return
        digest = file_sha256(path)
        entry = {"role": role, "path": str(path), "sha256": digest, **extra}
        if digest is None:
            entry["missing"] = True
        else:
            entry["bytes"] = Path(path).stat().st_size
        if entry not in self.inputs:
            self.inputs.append(entry)

    def skip(self, what: str, reason: str) -> None:
        """Record a file that was not written, and why (e.g. no annotations)."""
        self.not_written.append({"what": what, "reason": reason})

    def manifest(self) -> dict:
        return {"created": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
                "git": git_state(), **self.provenance, "inputs": self.inputs, "files": self.files,
                "not_written": self.not_written}

    def write_manifest(self) -> Path:
        if self.latex:
            self._add("preview.tex", "an A4 document inputting every table and figure (pdflatex preview.tex)",
                      latex_document(self.latex), format="latex")
        manifest = self.manifest()
        path = self.folder / "manifest.json"
        atomic_write_text(path, json.dumps(manifest, indent=1, ensure_ascii=False, default=str) + "\n")
        return path


def zip_folder(folder: str | Path) -> bytes:
    """Every file of ``folder`` (an export) in one ZIP archive, by its name (what the pages' export
    buttons download)."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(Path(folder).iterdir()):
            if path.is_file():
                archive.write(path, path.name)
    return buffer.getvalue()


def in_temporary_folder(write) -> bytes:
    """``write(folder)`` into a fresh temporary folder, then that folder as ZIP bytes (removed after)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="irdash-export-") as folder:
        write(Path(folder))
        return zip_folder(folder)
