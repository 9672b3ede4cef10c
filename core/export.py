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


def latex_escape(text: str) -> str:
    """``text`` safe inside LaTeX (its special characters escaped)."""
    out = str(text)
    for char, escaped in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                          ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"),
                          ("^", r"\textasciicircum{}")):
        out = out.replace(char, escaped) if char != "\\" else out.replace(char, "\0")
    return out.replace("\0", r"\textbackslash{}").replace("∩", r"$\cap$").replace("→", r"$\to$").replace(
        "τ", r"$\tau$").replace("θ", r"$\theta$").replace("·", r"$\cdot$").replace("†", r"$^\dagger$").replace(
        "‡", r"$^\ddagger$")


def booktabs(frame, caption: str, label: str = "", digits: int = 4) -> str:
    """``frame`` as a booktabs LaTeX table (``\\toprule``/``\\midrule``/``\\bottomrule``), every cell and the
    caption escaped, floats to ``digits`` places."""
    import math

    def cell(value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "--"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:.{digits}g}" if abs(value) < 1e-3 and value != 0 else f"{value:.{digits}f}"
        return latex_escape(value)

    columns = [latex_escape(c) for c in frame.columns]
    align = "".join("r" if frame[c].dtype.kind in "iuf" else "l" for c in frame.columns)
    lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(caption)}}}"]
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule", " & ".join(columns) + r" \\", r"\midrule"]
    lines += [" & ".join(cell(v) for v in row) + r" \\" for row in frame.itertuples(index=False)]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


@dataclass
class Export:
    """The files of one export folder and what each is; ``manifest()`` is ``manifest.json``."""
    folder: Path
    provenance: dict  # study / run ids, models with digests, configuration
    files: list[dict] = field(default_factory=list)
    not_written: list[dict] = field(default_factory=list)

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

    def figure(self, fig, stem: str, what: str, title: str, formats: Sequence[str] = FIGURE_FORMATS,
               **extra) -> list[Path]:
        """Write ``fig`` as ``stem.svg``, ``stem.pdf``, ``stem.png`` (``title``: the configuration, also in
        the files' metadata) and close it."""
        import matplotlib.pyplot as plt

        try:
            return [self._add(f"{stem}.{fmt}", what, figure_bytes(fig, fmt, title), format=fmt, title=title, **extra)
                    for fmt in formats]
        finally:
            plt.close(fig)

    def table(self, frame, stem: str, what: str, caption: str, **extra) -> list[Path]:
        """Write ``frame`` as ``stem.csv`` and the booktabs ``stem.tex`` (caption = configuration)."""
        return [self._add(f"{stem}.csv", what, frame.to_csv(index=False), format="csv", **extra),
                self._add(f"{stem}.tex", what, booktabs(frame, caption, label=f"tab:{stem}"), format="latex",
                          caption=caption, **extra)]

    def text(self, name: str, what: str, text: str, **extra) -> Path:
        return self._add(name, what, text, **extra)

    def skip(self, what: str, reason: str) -> None:
        """Record a file that was not written, and why (e.g. no annotations)."""
        self.not_written.append({"what": what, "reason": reason})

    def manifest(self) -> dict:
        return {"created": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
                "git": git_state(), **self.provenance, "files": self.files, "not_written": self.not_written}

    def write_manifest(self) -> Path:
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
