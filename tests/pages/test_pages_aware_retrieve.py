"""The "Difficulty-aware retrieval" section of the Difficulty-aware page (AppTest) on a stored result made by the
library (real Lucene index, a scripted 1.5B rewriter whose rewrite is hostile HTML): verdicts, the partial-corpus
note, the "not a finding" label, and the rewrites side by side as text."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.pipeline.aware import retrieve_collection as rc
from tests.support.aware_results import HOSTILE_REWRITE as HOSTILE, retrieved_result
from tests.pages.support import page_alone



def _page() -> AppTest:
    return page_alone("difficulty-aware-generation")


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
    verdicts, leaving, leaving_tests, rewrites, raw = (at.dataframe[i].value for i in range(-5, 0))
    # the declared family, the primary comparison first and said so with why (issue 40)
    assert list(verdicts["comparison"]) == ["aware rewrite vs control rewrite", "aware rewrite vs original",
                                            "plain rewrite vs original", "rm3 vs original",
                                            "aware rewrite vs plain rewrite"]
    assert list(verdicts["role"]) == ["primary"] + ["secondary"] * 4
    assert any(m.value.startswith("Primary comparison (declared, first row): aware rewrite vs control rewrite")
               and "regresses toward the mean" in m.value for m in at.markdown)
    assert set(verdicts["verdict"]) == {"inconclusive"}
    assert list(leaving["n"]) == [len(rc.HARD)] * 4
    assert list(leaving_tests["comparison"]) == ["aware rewrite vs control rewrite", "aware rewrite vs plain rewrite"]
    assert list(rewrites["qid"]) == rc.HARD
    # each row opens its query on the Query page (issue 42), the raw replies' rows too
    assert list(rewrites["query page"]) == [f"query?dataset=dl20&qid={q}" for q in rc.HARD]
    assert set(raw["query page"]) == {f"query?dataset=dl20&qid={q}" for q in rc.HARD}
    # the hostile rewrite is a cell's text; the empty plain and control replies are shown as the original kept
    assert set(rewrites["difficulty-aware rewrite"]) == {HOSTILE}
    assert set(rewrites["plain rewrite"]) == set(rewrites["control rewrite"]) == {"[call failed: original query kept]"}
    assert all(len(c.split()) == len(rc.SENTENCE.split()) for c in rewrites["control statement"])
    assert set(raw["raw reply"]) >= {HOSTILE}
    shown = [e.value for e in (*at.markdown, *at.caption, *at.warning, *at.info)]
    assert not any("<script>" in text for text in shown)


def test_the_section_starts_an_aware_retrieve_job_and_refuses_a_bad_field(cache, monkeypatch):
    """The queued job stays queued (no CPU slot) and the ``cache`` fixture cancels it afterwards."""
    from core import jobs
    from pipeline.cli import build_parser
    from pipeline.views import aware_retrieve as view

    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")
    at = _page()
    at.text_input(key="aware_retrieve_rewriter").set_value("nonsense:::model")
    at.number_input(key="aware_retrieve_max").set_value(-2)
    at.button(key="aware_retrieve_start").click().run()
    errors = " | ".join(e.value for e in at.error)
    assert "Rewriter (LLM spec):" in errors and "H2R queries (0 = all): expected an integer >= 0" in errors
    assert jobs.list_jobs() == []  # nothing queued
    at.text_input(key="aware_retrieve_rewriter").set_value("embedded")
    at.number_input(key="aware_retrieve_max").set_value(6)
    at.selectbox(key="aware_retrieve_reasons").set_value("typology")
    at.button(key="aware_retrieve_start").click().run()
    assert not at.exception
    (job,) = jobs.list_jobs()
    assert job.meta["kind"] == view.AWARE_RETRIEVE.name == "pipeline.aware-retrieve" and job.meta["dataset"] == "dl19"
    args = build_parser().parse_args(job.command[3:])  # the CLI's own parser reads the job's command
    assert (args.command, args.dataset, args.rewriter, args.max_queries, args.reasons, args.json) == (
        "aware-retrieve", "dl19", "embedded", 6, "typology", True)
    assert args.progress_key == job.meta["progress"] and args.progress_key.startswith("aware-retrieve")
    assert at.button(key="aware_retrieve_start").disabled
    assert any(f"Queued job #{job.id}" in s.value for s in at.success)


def test_zero_queries_means_all_and_a_bad_reasons_source_is_refused(cache):
    from core import jobs
    from pipeline.aware.retrieve_jobs import aware_retrieve_command
    from pipeline.views import aware_retrieve as view

    view.submit("dl20", None, rewriter="embedded", max_queries=0)
    (job,) = jobs.list_jobs()
    assert "--max-queries" not in job.command and "--reasons" not in job.command and "--data" not in job.command
    with pytest.raises(ValueError, match="reasons must be one of assign, typology, got 'nope'"):
        aware_retrieve_command("dl19", None, rewriter="embedded", reasons="nope")
