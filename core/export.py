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


# Stored results are what the code makes, not code: the MQ2008 reproduction writes its result under bench/results
# after each part, and that must not mark the code of its later parts, and of the runs they train, as changed.
RESULT_PATHS = ("bench/results",)


def git_state(root: Path = PROJECT_ROOT) -> dict:
    """The commit of the code that made the files, and whether tracked files other than the stored results
    (:data:`RESULT_PATHS`) had changes."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                     *(f":(exclude){path}" for path in RESULT_PATHS)], cwd=root,
                                    capture_output=True, text=True, check=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": dirty}


def slug(text: str) -> str:
    """A file-name part: ``bm25 | planted | llama-3.3-70b | binary`` -> ``bm25_planted_llama-3.3-70b_binary``."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", str(text)).strip("_") or "x"


# The preview's A4 10pt article (and most single-column journals): its \linewidth and \textheight in points
LINE_PT, TEXT_HEIGHT_PT = 345.0, 598.0
FIGURE_HEIGHT = 0.7  # of the text height: a figure leaves room for its caption
LEAST_FIGURE_PT = 8.0  # \footnotesize of a 10pt article: no figure text smaller where it is included


def fit_to_line(fig, width_pt: float = LINE_PT, height_pt: float = FIGURE_HEIGHT * TEXT_HEIGHT_PT) -> None:
    """Size ``fig`` in inches so that, saved with a tight bounding box, it is the line's width (or shorter
    than ``height_pt``): :func:`figure_latex` includes it at its natural size, so its fonts print at the sizes
    they were set in. A figure drawn wider and scaled down to the line shrinks its type with it (the LTR
    scatter, 7.5 in, set 8 pt legend text at about 5 pt). Titles and labels wider than the line wrap."""
    import matplotlib

    pad = 2 * matplotlib.rcParams["savefig.pad_inches"]
    for ax in fig.axes:  # titles and axis labels wrap at the figure's edge (a legend's text is its own)
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            text.set_wrap(True)
    for _ in range(6):  # the tight box does not scale with the figure (type keeps its size): converge
        fig.canvas.draw()
        box = fig.get_tightbbox(fig.canvas.get_renderer())
        scale = min(width_pt / 72.27 / (box.width + pad), height_pt / 72.27 / (box.height + pad))  # TeX points
        if 0.985 <= scale <= 1.0:
            return
        fig.set_size_inches(fig.get_figwidth() * scale * 0.995, fig.get_figheight() * scale * 0.995)


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


def without_cache_paths(text: str) -> str:
    """``text`` with the cache folder's path replaced by words (``/home/x/cache/annotations.sqlite`` ->
    ``the cache's annotations.sqlite``): a reason or caption names a store by where it lies on this machine,
    which means nothing in a paper (issue 40: findings.tex's typology reason did). Every exported text file
    and every escaped LaTeX text goes through it."""
    if "/" not in text and "\\" not in text:
        return text
    from core.paths import cache_dir

    for root in sorted({str(cache_dir()), str(cache_dir().resolve())}, key=len, reverse=True):
        text = re.sub(re.escape(root) + r"[/\\]([^\s),;\]]+)", lambda m: f"the cache's {m.group(1)}", text)
        text = text.replace(root, "the cache")
    return text


def latex_text(value) -> str:
    """``value`` as LaTeX text: the one escaping function of every exported ``.tex`` (tables, captions,
    notes) and of ``ltr report --latex``; see :data:`LATEX_CHARACTERS` (cache paths in words first:
    :func:`without_cache_paths`)."""
    out = []
    for char in without_cache_paths(str(value)):
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
# What an A4 article (10pt) holds in \footnotesize, counted in characters (~4.35 pt each in a table's cells,
# measured) and lines (9.5 pt):
LINE_CHARS = 78  # across the text width (345 pt), a portrait table's line
PAGE_CHARS = 134  # across the text height (598 pt), a sideways table's line
PAGE_LINES = 52  # down the text height, less the rules' room: a portrait table's lines (caption included)
SIDEWAYS_LINES = 30  # down the text width, likewise: a sideways table's lines
SEP_CHARS = 3  # the space between two columns (2 \tabcolsep = 12 pt), in characters


@dataclass
class _Column:
    name: str
    cells: list[str]  # as printed (plain text)
    numeric: bool
    wraps: bool  # a ragged-right p{} column
    natural: int  # characters of its widest line (a wrapping column: its longest cell)
    minimum: int  # the narrowest it may be (a wrapping column: its longest word, at least WRAP_AT)
    header: list[str]  # its header's lines


def _columns(frame, digits: int) -> list[_Column]:
    out = []
    for column in frame.columns:
        cells = [_plain_cell(v, column, digits) for v in frame[column]]
        longest = max((len(c) for c in cells), default=0)
        numeric = frame[column].dtype.kind in "iuf"
        wraps = not numeric and longest > WRAP_AT
        lines = _header_lines(column, stacked=not wraps)
        if wraps:
            words = max((len(w) for c in [*cells, *lines] for w in c.split()), default=0)
            out.append(_Column(column, cells, numeric, True, longest, max(words, WRAP_AT), lines))
        else:
            natural = max(longest, *(len(x) for x in lines))
            out.append(_Column(column, cells, numeric, False, natural, natural, lines))
    return out


def _widths(columns: list[_Column], line_chars: int) -> list[int] | None:
    """Each column's width in characters on a line of ``line_chars``: fixed columns as wide as their cells,
    wrapping ones sharing what is left by their natural widths (none narrower than its minimum); None when
    even the minimums do not fit."""
    seps = SEP_CHARS * len(columns)
    if sum(c.minimum for c in columns) + seps > line_chars:
        return None
    fixed = sum(c.natural for c in columns if not c.wraps) + seps
    room = max(line_chars - fixed, 0)
    total = sum(c.natural for c in columns if c.wraps) or 1
    widths = [min(c.natural, max(c.minimum, int(room * c.natural / total))) if c.wraps else c.natural
              for c in columns]
    while sum(widths) + seps > line_chars:  # the minimums fit: narrow the widest wrapping column
        i = max((i for i, c in enumerate(columns) if c.wraps and widths[i] > c.minimum), key=lambda i: widths[i])
        widths[i] -= 1
    return widths


def _row_lines(columns: list[_Column], widths: list[int]) -> list[int]:
    """How many lines each row takes: its tallest wrapping cell's, estimated from its length (a column of
    ``w`` characters holds about 1.1 w of running text, 0.5 em each: the ragged right's loss is covered)."""
    import math

    rows = len(columns[0].cells) if columns else 0
    return [max([1, *(math.ceil(len(c.cells[r]) / max(w, 8)) for c, w in zip(columns, widths)
                      if c.wraps)]) for r in range(rows)]


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


def _layouts(columns: list[_Column], keys: int = 1) -> list[tuple[bool, list[tuple[list[int], list[int]]]]]:
    """The ways to set the table, each ``(sideways, parts)`` with each part as (column indices, widths in
    characters): on a portrait line (its text columns wrapped), else sideways (a ``sidewaystable``: the text
    height as its line), else its columns split into parts that each fit a portrait or a sideways line, the
    first ``keys`` columns (what names a row) in every part (both offered: :func:`booktabs` takes the one that fills fewer
    pages)."""
    every = list(range(len(columns)))
    for sideways, chars in ((False, LINE_CHARS), (True, PAGE_CHARS)):
        widths = _widths(columns, chars)
        if widths is not None:
            return [(sideways, [(every, widths)])]
    out = []
    for sideways, chars in ((False, LINE_CHARS), (True, PAGE_CHARS)):
        key = every[:keys]
        parts, group = [], list(key)
        for i in every[keys:]:
            if _widths([columns[j] for j in (*group, i)], chars) is None:
                if len(group) == len(key):
                    break  # this column does not fit beside the keys on this line
                parts.append(group)
                group = [*key, i]
                if _widths([columns[j] for j in group], chars) is None:
                    break  # nor does it fit beside the keys alone
            else:
                group.append(i)
        else:
            out.append((sideways, [(g, _widths([columns[j] for j in g], chars)) for g in [*parts, group]]))
    if not out:
        raise ValueError(f"a column of {[c.name for c in columns]} is wider than a sideways A4 page beside the keys")
    return out


def _row_groups(lines: list[int], room: int) -> list[list[int]]:
    """The rows in runs whose lines fit ``room`` (a run holds at least one row)."""
    groups, group, used = [], [], 0
    for r, n in enumerate(lines):
        if group and used + n > room:
            groups.append(group)
            group, used = [], 0
        group.append(r)
        used += n
    return [*groups, group] if group or not groups else groups


def _spec(column: _Column, width: int) -> str:
    if column.wraps:
        return rf">{{\raggedright\arraybackslash}}p{{{0.5 * width:.1f}em}}"
    return "r" if column.numeric else "l"


# A table's LaTeX sets it in a box first and writes its width to the log ("Exported table tab:x: width
# 300.0pt on a line of 345.0pt, type 8pt"): what shows, in the compiled document, that no table was scaled
# (tests.support.latex reads it). A table wider than its line after all (the layout counts characters, not
# glyphs) is scaled down to the line, never up, and the log says by how much.
BOX = r"\ifdefined\exporttablebox\else\newsavebox\exporttablebox\fi"


def booktabs(frame, caption: str, label: str = "", digits: int = 3, notes: Sequence[str] = (), keys: int = 1) -> str:
    """``frame`` as booktabs tables that fit an A4 page in ``\\footnotesize``, never scaled: text columns with
    long cells wrap (ragged-right ``p{}`` columns sharing what the other columns leave of the line); a table
    still wider than the text width is set sideways (``sidewaystable``, the text height as its line), and
    one wider than that has its columns split into parts, the first ``keys`` columns (what names a row) in
    each (on portrait or sideways
    lines, whichever takes fewer pages); rows that would run
    off the page continue in a further float (the same table number, "(continued)"). Every cell, the
    caption and the ``notes`` (lines under the table: what a mark means, where the full text is) through
    :func:`latex_cell`/:func:`latex_text`; floats to ``digits`` places, p-values as ``< 0.001`` or two
    significant digits. Needs :data:`LATEX_PACKAGES` (``array``, ``booktabs``, ``graphicx``, ``rotating``)."""
    columns = _columns(frame, digits)
    layouts = [(False, [([], [])])] if not columns else _layouts(columns, keys)
    sideways, pieces, _ = min((_pieces(columns, parts, sideways, caption, notes) for sideways, parts in layouts),
                              key=lambda layout: (layout[2], len(layout[1])))
    environment = "sidewaystable" if sideways else "table"
    out = []
    for number, (indices, widths, rows) in enumerate(pieces):
        shown = frame.iloc[rows, indices]
        where = label or "table"
        lines = [rf"\begin{{{environment}}}[tbp]" if not sideways else rf"\begin{{{environment}}}", r"\centering",
                 r"\footnotesize"]
        if number == 0:
            lines.append(rf"\caption{{{latex_text(caption)}}}")
            if label:
                lines.append(rf"\label{{{label}}}")
        else:  # the same table number, continued
            lines.append(r"\addtocounter{table}{-1}\caption{(continued) " + latex_text(_short(caption)) + "}")
            where += f" (part {number + 1})"
        header = " & ".join(_header(columns[i].header) for i in indices) + r" \\"
        body = [" & ".join(latex_cell(v, c, digits) for v, c in zip(row, shown.columns)) + r" \\"
                for row in shown.itertuples(index=False)]
        spec = "".join(_spec(columns[i], w) for i, w in zip(indices, widths))
        lines += [BOX, r"\sbox\exporttablebox{\begin{tabular}{" + spec + "}", r"\toprule", header, r"\midrule", *body,
                  r"\bottomrule", r"\end{tabular}}%",
                  rf"\typeout{{Exported table {where}: width \the\wd\exporttablebox\space on a line of "
                  r"\the\linewidth, type \csname f@size\endcsname pt}%",
                  r"\ifdim\wd\exporttablebox>\linewidth\resizebox{\linewidth}{!}{\usebox\exporttablebox}"
                  r"\else\usebox\exporttablebox\fi"]
        if notes and number == len(pieces) - 1:
            lines += [r"\par\smallskip", r"\parbox{\linewidth}{\raggedright " + " ".join(latex_text(n) for n in notes)
                      + "}"]
        lines += [rf"\end{{{environment}}}", ""]
        out.append("\n".join(lines))
    return "\n".join(out)


def _pieces(columns: list[_Column], parts, sideways: bool, caption: str, notes: Sequence[str]):
    """``(sideways, pieces, pages)``: each of ``parts`` (columns and widths) in runs of rows that fit the page
    with the caption, the header and the notes, as (column indices, widths, row indices); about how many
    pages they fill (a sideways float takes a page, portrait ones share pages)."""
    import math

    line = PAGE_CHARS if sideways else LINE_CHARS
    head = math.ceil(len(caption) / line) + 1 + sum(math.ceil(len(n) / line) for n in notes)
    pieces, used = [], 0
    for indices, widths in parts:
        chosen = [columns[i] for i in indices]
        header_lines = max((len(c.header) for c in chosen), default=1)
        room = (SIDEWAYS_LINES if sideways else PAGE_LINES) - head - header_lines
        lines = _row_lines(chosen, widths)
        for rows in _row_groups(lines, max(room, 1)):
            pieces.append((indices, widths, rows))
            used += head + header_lines + sum(lines[r] for r in rows)
    return sideways, pieces, len(pieces) if sideways else math.ceil(used / PAGE_LINES)


def _short(caption: str, chars: int = 80) -> str:
    """A continued table's caption: the first sentence of ``caption``, cut at a word near ``chars``."""
    first = caption.split(". ")[0]
    return first if len(first) <= chars else first[:chars].rsplit(" ", 1)[0] + " ..."


def figure_latex(stem: str, caption: str, label: str = "") -> str:
    """A figure environment for ``stem.pdf`` at its natural size (:func:`fit_to_line` made it the line's
    width, so its type prints at the size it was set in), ``caption`` (the configuration that made it) and
    ``\\label{fig:stem}``; the log names the width it was set at (``Exported figure stem.pdf: width Wpt on a
    line of Lpt``), which the export tests read beside the PDF's font sizes."""
    return "\n".join([r"\begin{figure}[tbp]", r"\centering",
                      rf"\sbox0{{\includegraphics{{{stem}.pdf}}}}%",
                      rf"\typeout{{Exported figure {stem}.pdf: width \the\wd0 \space on a line of \the\linewidth}}%",
                      r"\usebox0",
                      rf"\caption{{{latex_text(caption)}}}", rf"\label{{{label or 'fig:' + stem}}}",
                      r"\end{figure}", ""])


LATEX_PACKAGES = ("array", "booktabs", "graphicx", "rotating")


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
            atomic_write_text(path, without_cache_paths(data))
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
            fit_to_line(fig)
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
              keys: int = 1, **extra) -> list[Path]:
        """Write ``frame`` as ``stem.csv`` and the booktabs ``stem.tex`` (caption = configuration; ``notes``:
        lines under the table; ``latex_frame``: the columns a paper prints, when they differ from the CSV's;
        ``keys``: the leading columns that name a row, repeated in each part of a table split by columns)."""
        shown = frame if latex_frame is None else latex_frame
        paths = [self._add(f"{stem}.csv", what, frame.to_csv(index=False), format="csv", **extra),
                 self._add(f"{stem}.tex", what, booktabs(shown, caption, label=f"tab:{stem}", notes=notes, keys=keys),
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
