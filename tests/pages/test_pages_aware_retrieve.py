"""The "Difficulty-aware retrieval" section of the Difficulty-aware page (AppTest) on a stored result made by the
library (real Lucene index, a scripted 1.5B rewriter whose rewrite is hostile HTML): verdicts, the partial-corpus
note, the "not a finding" label, and the rewrites side by side as text."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.pipeline.aware import retrieve_collection as rc
from tests.support.aware_results import HOSTILE_REWRITE as HOSTILE, retrieved_result
from tests.support.paths import ROOT

PAGE = str(ROOT / "pages" / "difficulty-aware-generation.py")


def _page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_section_says_how_to_run_one_without_results(cache):
    at = _page()
    assert "python -m pipeline aware-retrieve" in at.info[-1].value
    assert at.header[-1].value == "Difficulty-aware retrieval"


@pytest.mark.slow
def test_the_section_shows_a_stored_result_with_its_notes_and_the_rewrites_as_text(cache, tmp_path):
    result = retrieved_result(tmp_path)
    at = _page()
    assert result["id"] in at.selectbox(key="aware_retrieve_result").format_func(0)
    warnings = [w.value for w in at.warning]
    assert any("partial corpus" in w for w in warnings)
    assert any(w.startswith("Not a finding: rewriter is a 1.5B (stated) model, under the 3B") for w in warnings)
    verdicts, leaving, rewrites, raw = (at.dataframe[i].value for i in range(-4, 0))
    assert list(verdicts["comparison"]) == ["aware rewrite vs original", "plain rewrite vs original",
                                            "rm3 vs original", "aware rewrite vs plain rewrite"]
    assert set(verdicts["verdict"]) == {"inconclusive"}
    assert list(leaving["n"]) == [len(rc.HARD)] * 3
    assert list(rewrites["qid"]) == rc.HARD
    # the hostile rewrite is a cell's text; the empty plain reply is shown as the original query kept
    assert set(rewrites["difficulty-aware rewrite"]) == {HOSTILE}
    assert set(rewrites["plain rewrite"]) == {"[call failed: original query kept]"}
    assert set(raw["raw reply"]) >= {HOSTILE}
    shown = [e.value for e in (*at.markdown, *at.caption, *at.warning, *at.info)]
    assert not any("<script>" in text for text in shown)
