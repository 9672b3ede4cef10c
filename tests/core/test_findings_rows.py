"""The findings tables' rows (core.findings.summary_rows): the CSV's reason whole, the LaTeX table's cut to a
length a page can hold (the LearnDCG export's findings.tex ran 118 pt off its page with the whole reasons)."""
from __future__ import annotations

from core.findings import LATEX_REASON_CHARS, Finding, cut_reason, summary_rows


def test_the_latex_rows_cut_a_long_reason_at_a_word_and_say_where_it_is_whole():
    long = Finding("cost", "claim", "paper", "does not hold", "mq2008 / mlp: " + "word " * 200)
    short = Finding("drift", "claim", "paper", "holds", "θ_d drifts")
    whole, cut = summary_rows([long, short]), summary_rows([long, short], LATEX_REASON_CHARS)
    assert whole[0]["reason"] == long.reason and whole[1] == cut[1]  # a short reason is never cut
    assert cut[0]["reason"].endswith(" [...] (in full: findings.csv)")
    kept = cut[0]["reason"].removesuffix(" [...] (in full: findings.csv)")
    assert long.reason.startswith(kept) and len(kept) <= LATEX_REASON_CHARS and kept.endswith("word")
    assert cut_reason("a b", 3) == "a b"
