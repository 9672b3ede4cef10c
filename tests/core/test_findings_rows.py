"""The findings tables' rows (core.findings.summary_rows): the CSV's reason whole, the LaTeX table's cut to a
length a page can hold (the LearnDCG export's findings.tex ran 118 pt off its page with the whole reasons),
the same in the Findings page's LaTeX downloads; no cache path in any of them."""
from __future__ import annotations

from core.export import Export, latex_document, without_cache_paths
from core.findings import LATEX_REASON_CHARS, Finding, cut_reason, summary_rows
from tests.support.latex import compile_tex, needs_pdflatex


def test_the_latex_rows_cut_a_long_reason_at_a_word_and_say_where_it_is_whole():
    long = Finding("cost", "claim", "paper", "does not hold", "mq2008 / mlp: " + "word " * 200)
    short = Finding("drift", "claim", "paper", "holds", "θ_d drifts")
    whole, cut = summary_rows([long, short]), summary_rows([long, short], LATEX_REASON_CHARS)
    assert whole[0]["reason"] == long.reason and whole[1] == cut[1]  # a short reason is never cut
    assert cut[0]["reason"].endswith(" [...] (in full: findings.csv)")
    kept = cut[0]["reason"].removesuffix(" [...] (in full: findings.csv)")
    assert long.reason.startswith(kept) and len(kept) <= LATEX_REASON_CHARS and kept.endswith("word")
    assert cut_reason("a b", 3) == "a b"


def _long_findings(cache) -> list[Finding]:
    """Ten findings whose reasons name every part (DL19's run to thousands of characters), one naming the
    annotation store by its path in the cache, as the typology finding does."""
    parts = "; ".join(f"dl19 · bm25 | gpt-{i} | llama-3.3-70b | binary: Wilson 95% [0.0%, 14.8%] vs < 10%"
                      for i in range(30))
    found = [Finding(f"claim_{i}", "claim", "< 10%", "inconclusive", parts) for i in range(9)]
    found.append(Finding("typology_agreement", "claim", "0.9", "not measurable here",
                         f"dl19: no annotations in the store ({cache / 'annotations.sqlite'})"))
    return found


@needs_pdflatex
def test_the_findings_page_latex_cuts_as_the_export_and_fits_its_page(tmp_path, monkeypatch):
    """Issue 40: the Findings page's LaTeX download printed every reason whole ("Float too large for page by
    554 pt" for DL19) and named the annotation store by its cache path. Both studies' downloads now cut as
    the exports do, compile on A4 with nothing too large, scaled or small, and name no cache path."""
    from ltr.views.findings import findings_latex as ltr_latex
    from pipeline.views.findings import findings_latex

    cache = tmp_path / "cache"
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(cache))
    found = _long_findings(cache)
    downloads = {"failure.tex": findings_latex(found, "dl19"),
                 "ltr.tex": ltr_latex({"experiment": "grid", "test": "paired t-test, Holm",
                                       "findings": {f.name: f for f in found}})}
    for name, tex in downloads.items():
        assert str(cache) not in tex and "the cache's annotations.sqlite" in tex, name
        assert tex.count("[...] (in full: findings.csv)") == 9, name
        (tmp_path / name).write_text(tex)
    (tmp_path / "doc.tex").write_text(latex_document(list(downloads)))
    compiled = compile_tex(tmp_path, "doc.tex")
    assert compiled.publishable() == [] and compiled.overfull(10) == []
    assert {t["table"].split(" (part")[0] for t in compiled.tables()} == {"tab:findings", "tab:ltr-findings"}


def test_no_exported_file_names_a_cache_path(tmp_path, monkeypatch):
    """Issue 40: findings.tex's typology reason named the annotation store by its path in the cache."""
    import pandas as pd

    cache = tmp_path / "cache"
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(cache))
    (finding,) = _long_findings(cache)[-1:]
    export = Export(tmp_path / "out", {})
    export.table(pd.DataFrame(summary_rows([finding])), "findings", "findings", f"Read from {cache}.")
    for name in ("findings.csv", "findings.tex"):
        text = (tmp_path / "out" / name).read_text()
        assert str(cache) not in text and "the cache's annotations.sqlite" in text, name
    assert "Read from the cache." in (tmp_path / "out" / "findings.tex").read_text()
    assert without_cache_paths(f"{cache}/letor_folds/x-1/Fold1/test.txt, {cache}") == \
        "the cache's letor_folds/x-1/Fold1/test.txt, the cache"
