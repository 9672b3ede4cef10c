"""Issue 33: every exported ``.tex`` goes through one escaping and formatting function (``core.export``).
Before, ``< 10\\%`` printed as "¡ 10%" and ``|`` as "—" (pdflatex's default OT1 encoding), p-values
printed as ``0.0000000000000000003``, and a table with long text ran past the page (the findings table by
1,407 pt). These compile the output with pdflatex and read the PDF's text back."""
from __future__ import annotations

import pandas as pd
import pytest

from core.export import (Export, booktabs, format_number, format_p, is_p_column, latex_cell, latex_document,
                         latex_text)
from tests.support.latex import compile_tex, needs_pdflatex

SPECIALS = r"< > | % _ & # ~ ^ \ $ { }"


def test_p_values_print_as_a_paper_prints_them():
    assert format_p(3e-19) == "< 0.001" and format_p(0.0009999) == "< 0.001"
    assert format_p(0.042) == "0.042" and format_p(0.5) == "0.50" and format_p(0.0042) == "0.0042"
    assert format_p(1.0) == "1.00" and format_p(None) == "--" and format_p(float("nan")) == "--"
    assert format_number(3e-19) == "3.0e-19" and format_number(0.12345) == "0.123" and format_number(7) == "7"
    assert latex_cell(3e-19, "p_holm@10") == r"\textless{} 0.001"
    assert latex_cell(1.9e-19, "jaccard") == r"$1.9\times10^{-19}$"
    for name in ("p", "p@10", "p_holm@1", "kendall_p_holm", "pearson_p", "p_hypergeometric"):
        assert is_p_column(name), name
    for name in ("precision", "jaccard", "share_of_universe", "top_p", "n"):
        assert not is_p_column(name), name


def test_every_special_character_is_escaped_once():
    assert latex_text("< 10%") == r"\textless{} 10\%"
    assert latex_text("a|b") == r"a\textbar{}b"
    assert latex_text("\\") == r"\textbackslash{}"  # not \textbackslash\{\}
    assert latex_text("H2R ∩ H2G") == r"H2R $\cap$ H2G"
    assert latex_text("漢") == "[U+6F22]"  # outside what pdflatex sets: named, never a compile error


@needs_pdflatex
@pytest.mark.parametrize("fontenc", ["", r"\usepackage[T1]{fontenc}"])
def test_special_characters_print_as_themselves(tmp_path, fontenc):
    """In OT1 (no fontenc: the old ``< 10\\%`` printed "¡ 10%") and in T1, the PDF shows each character."""
    body = latex_text(f"X {SPECIALS} < 10% a|b θ_d ∩ Y")
    (tmp_path / "doc.tex").write_text("\\documentclass[a4paper]{article}\n" + fontenc +
                                      "\n\\begin{document}\n" + body + "\n\\end{document}\n")
    text = "".join(compile_tex(tmp_path, "doc.tex").text().split())  # pdftotext's spacing varies by font
    # OT1 draws _ as a rule and ~ ^ as accents, which pdftotext does not read back as those characters
    expected = "X<>|%_&#~^\\${}<10%a|b" if fontenc else "X<>|%&#˜ˆ\\${}<10%a|b"
    assert expected in text, text
    assert "¡" not in text and "¿" not in text and "—" not in text


@needs_pdflatex
def test_a_table_with_long_text_and_many_numbers_fits_a4(tmp_path):
    reason = ("dl19 · bm25 | planted | llama-3.3-70b | binary: exclusive shares H2R 0.0%, H2G 0.0%, H2J 72.7%; "
              "outside 40.0%-60.0%: H2R, H2G, H2J; ") * 4
    findings = pd.DataFrame([{"finding": "half_exclusive", "verdict": "does not hold", "paper": "< 10%",
                              "reason": reason}] * 3)
    wide = pd.DataFrame([{f"column_number_{i}": 0.123456 * i for i in range(16)} | {"p_holm@10": 2e-19}] * 3)
    export = Export(tmp_path, {})
    export.table(findings, "findings", "findings", "Claims", notes=["† better, ‡ worse."])
    export.table(wide, "wide", "wide", "A wide numeric table")
    export.write_manifest()
    compiled = compile_tex(tmp_path, "preview.tex")
    assert compiled.overfull(10) == [], compiled.overfull(10)
    assert compiled.publishable() == []  # issue 40: the wide table was scaled to fit, its type under 6 pt
    text = compiled.text()
    assert "< 0.001" in text and "0.0000000000000000002" not in text and "† better, ‡ worse." in text
    tex = (tmp_path / "findings.tex").read_text()
    assert r"\label{tab:findings}" in tex and r"\raggedright\arraybackslash}p{" in tex  # the reason wraps


def test_a_document_inputs_each_file():
    doc = latex_document(["a.tex", "b.tex"])
    assert r"\input{a.tex}" in doc and r"\input{b.tex}" in doc and "a4paper" in doc


def test_booktabs_of_an_empty_frame_still_has_its_rules():
    tex = booktabs(pd.DataFrame(columns=["a", "b"]), "empty")
    assert r"\toprule" in tex and r"\bottomrule" in tex


def _numbers(columns: int, rows: int = 3) -> pd.DataFrame:
    return pd.DataFrame([{"configuration": f"row {r}", **{f"measure_{i}": 0.123456 * i for i in range(columns)}}
                         for r in range(rows)])


@needs_pdflatex
def test_wide_and_long_tables_are_set_sideways_split_or_continued_never_scaled(tmp_path):
    """Issue 40: tables were scaled to 45-70% of their natural width (about 4 pt type) and a long one ran
    off its page. Now a table a little wider than the text stands sideways, a wider one has its columns
    split (the first column in every part), a long one continues in a further float of the same number;
    the compiled document shows no table scaled and none taller than its page."""
    long_text = pd.DataFrame([{"finding": f"claim_{r}", "reason": "a measured reason with its figures " * 14}
                              for r in range(12)])
    export = Export(tmp_path, {})
    export.table(_numbers(4), "narrow", "narrow", "Fits the text width")
    export.table(_numbers(8), "sideways", "sideways", "Wider than the text width")
    export.table(_numbers(30), "split", "split", "Wider than a sideways page")
    export.table(long_text, "long", "long", "Longer than a page")
    export.write_manifest()
    tex = {name: (tmp_path / f"{name}.tex").read_text() for name in ("narrow", "sideways", "split", "long")}
    assert r"\begin{table}" in tex["narrow"] and "sidewaystable" not in tex["narrow"]
    assert tex["sideways"].count(r"\begin{sidewaystable}") == 1
    split_parts = tex["split"].count(r"\begin{tabular}")
    assert split_parts >= 2 and tex["split"].count("row 0 &") == split_parts  # the first column in each part
    assert all(f"measure {i}" in tex["split"] or f"measure\\_{i}" in tex["split"] for i in range(30))
    assert tex["long"].count(r"\begin{table}") >= 2 and r"\addtocounter{table}{-1}\caption{(continued)" in tex["long"]
    compiled = compile_tex(tmp_path, "preview.tex")
    assert compiled.publishable() == [] and compiled.overfull(10) == []
    tables = compiled.tables()
    assert {t["table"].split(" (part")[0] for t in tables} == {"tab:narrow", "tab:sideways", "tab:split", "tab:long"}
    assert all(t["scale"] == 1.0 and t["size"] == 8.0 for t in tables)
    assert [t["line"] for t in tables if t["table"] == "tab:sideways"] == [598.0]  # the text height, sideways
    text = compiled.text()
    assert "row 11" not in text and all(f"claim_{r}" in text for r in range(12))  # every row, once


@needs_pdflatex
def test_the_checks_see_a_scaled_table_and_small_type(tmp_path):
    """The checks every export test runs (tests.support.latex) find what they look for: a table set wider
    than its line is scaled down, and that scale and the smaller type are reported."""
    tex = booktabs(_numbers(4), "Squeezed", label="tab:squeezed")
    (tmp_path / "t.tex").write_text(tex)
    (tmp_path / "doc.tex").write_text(latex_document(["t.tex"]).replace(r"\begin{document}",
                                      r"\setlength{\textwidth}{150pt}\begin{document}"))
    compiled = compile_tex(tmp_path, "doc.tex")
    (table,) = compiled.tables()
    assert table["line"] == 150.0 and table["width"] > 150.0 and table["scale"] < 0.85
    assert compiled.scaled_under() == [table] and compiled.type_under() == [table]
    assert [p.split(":")[0] for p in compiled.publishable()] == [f"scaled to {table['scale']:.2f}", f"type "
                                                                 f"{8 * table['scale']:.1f} pt"]


def test_a_table_split_by_columns_repeats_the_columns_that_name_a_row():
    """The LearnDCG drift table names a row by fold, seed and parameter: a part without them is unreadable."""
    frame = _numbers(30).assign(parameter="theta_d")
    frame = frame[["configuration", "parameter", *[c for c in frame.columns if c.startswith("measure")]]]
    tex = booktabs(frame, "Split", keys=2)
    parts = tex.count(r"\begin{tabular}")
    assert parts >= 2 and tex.count(r"row 0 & theta\_d &") == parts


def _wide_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 6.5))  # the LTR scatter's size: 0.64 of it fits a 345 pt line
    ax.plot([1, 2], [3, 4], label="a loss")
    ax.set_title("MQ2008 · mlp: test NDCG@10 against training time, a title about as long as the export's",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    fig.tight_layout()
    return fig


@needs_pdflatex
def test_an_exported_figure_prints_its_type_at_least_footnotesize(tmp_path):
    """Issue 40 (leftover): a figure drawn 7.5 in wide and included at the text width shrank its 8 pt legend to
    about 5 pt. The export sizes it to the line (core.export.fit_to_line) and includes it at its natural size;
    the check reads the PDF's font sizes times the scale the log says it was set at."""
    export = Export(tmp_path, {})
    export.figure(_wide_figure(), "wide", "a figure", "A wide figure.")
    (tmp_path / "preview.tex").write_text(latex_document(export.latex))
    compiled = compile_tex(tmp_path, "preview.tex")
    (figure,) = compiled.figures()
    assert figure["width"] <= figure["line"] and figure["scale"] == pytest.approx(1, abs=1e-3)
    assert figure["smallest"] == pytest.approx(8, abs=0.01) and 10 in figure["sizes"]
    assert compiled.publishable() == [] and compiled.overfull() == []


@needs_pdflatex
def test_the_checks_see_a_figure_scaled_to_the_line(tmp_path):
    """The figure check finds what it looks for: the same figure saved at 7.5 in and set at the line's width
    prints its 8 pt legend under 6 pt."""
    from core.export import figure_bytes

    (tmp_path / "wide.pdf").write_bytes(figure_bytes(_wide_figure(), "pdf"))
    (tmp_path / "wide.tex").write_text(
        "\\begin{figure}\\sbox0{\\includegraphics[width=\\linewidth]{wide.pdf}}%\n"
        "\\typeout{Exported figure wide.pdf: width \\the\\wd0 \\space on a line of \\the\\linewidth}%\n"
        "\\usebox0\\end{figure}\n")
    (tmp_path / "doc.tex").write_text(latex_document(["wide.tex"]))
    compiled = compile_tex(tmp_path, "doc.tex")
    (figure,) = compiled.figures()
    assert figure["scale"] < 0.7 and figure["smallest"] < 6
    assert compiled.figure_type_under() == [figure]
    assert compiled.publishable() == [f"figure type {figure['smallest']:.1f} pt: wide.pdf"]
