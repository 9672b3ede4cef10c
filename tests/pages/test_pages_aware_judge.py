"""The Difficulty-aware page's judging section (AppTest) and pipeline.views.aware_judge, on a result made by a
scripted judge: verdicts, per-query labels beside NIST's, the prompt diff, and untrusted text shown as text."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from pipeline.views import aware_judge as view
from tests.support.aware_results import judged_result
from tests.pages.support import page_alone
from tests.support.paths import ROOT
from tests.support.preference_helpers import HOSTILE

PAGE = str(ROOT / "pages" / "difficulty-aware-generation.py")


def test_view_frames_read_the_stored_labels(cache):
    result = judged_result()
    (path,) = view.available()["dl19"]
    assert view.load(path)["id"] == result["id"]
    assert result["sets"]["binary"]["hard"] == ["q1", "q2"]
    frame = view.labels_frame(result, "q2")
    assert frame.to_dict("records") == [
        {"passage": "aq2", "NIST": 3, "baseline": "3", "aware": "unparseable", "control sentence": "3",
         "disagrees (binary)": "none", "disagrees (graded)": "none"},
        {"passage": "dq2", "NIST": 0, "baseline": "3", "aware": "0", "control sentence": "3",
         "disagrees (binary)": "baseline, control sentence", "disagrees (graded)": "baseline, control sentence"}]
    dis = view.disagreement_frame(result, "q1").set_index("setup")
    assert (dis.loc["binary", "baseline"], dis.loc["binary", "aware"], dis.loc["binary", "group"]) == (0.5, 0.0, "hard")
    verdicts = view.verdict_frame(result)
    # five comparisons and the interaction per setup, the primary comparison and the interaction first
    assert len(verdicts) == 12 and set(verdicts["verdict"].str.split().str[0]) == {"inconclusive"}
    assert verdicts["role"].tolist()[:4] == ["primary", "primary", "interaction", "interaction"]
    assert verdicts["comparison"][0] == "hard: aware vs control_sentence"
    assert "regresses toward the mean" in view.primary_note(result)
    assert "Not a finding" in view.not_a_finding(result)
    assert "reasons: file hand (made by unnamed, unknown size)" in view.provenance_line(result)  # a FILE: unsized
    assert view.prompt_change(result).count("\n+ ") == 1


def test_page_section_renders_a_stored_result_with_text_as_text(cache):
    result = judged_result()
    at = page_alone("difficulty-aware-generation")
    assert "Difficulty-aware judging" in [h.value for h in at.header]
    assert any("Not a finding" in w.value for w in at.warning)
    at.selectbox(key="judge_query").set_value("q1").run()
    assert not at.exception
    links = [b.proto.url for b in at.get("link_button") if b.proto.label == "Open this query on the Query page"]
    assert links == ["query?dataset=dl19&qid=q1"]  # the query's page, from the judging section (issue 42)
    codes = [c.value for c in at.code]
    sentence = result["queries"][0]["sentence"]
    assert sentence in codes and result["queries"][0]["control_sentence"] in codes
    assert any(f"+ {sentence}" in c for c in codes)  # the prompt diff, as code text
    assert any(HOSTILE in c for c in codes)  # the hostile query, inside the diff's code text
    rendered = [m.value for m in at.markdown] + [c.value for c in at.caption]
    assert any(text.startswith("Primary comparison (declared, first rows): hard: aware vs control sentence")
               and "regresses toward the mean" in text for text in rendered)
    assert not any("<script>" in text or "<b>" in text for text in rendered)  # never as markdown or HTML
    labels = at.dataframe[-1].value
    assert labels["NIST"].tolist() == [3, 0] and labels["baseline"].tolist() == ["3", "3"]


def test_section_starts_an_aware_judge_job_and_refuses_a_bad_field(cache, monkeypatch):
    """The queued job stays queued (no CPU slot) and the ``cache`` fixture cancels it afterwards."""
    from core import jobs
    from pipeline.cli import build_parser

    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    at.number_input(key="aware_judge_cap").set_value(0)
    at.button(key="aware_judge_start").click().run()
    assert "Pairs per query" in at.error[0].value and jobs.list_jobs() == []  # nothing queued
    at.number_input(key="aware_judge_cap").set_value(3)
    at.text_input(key="aware_judge_judge").set_value("embedded")
    at.number_input(key="aware_judge_max").set_value(8)
    at.button(key="aware_judge_start").click().run()
    assert not at.exception
    (job,) = jobs.list_jobs()
    assert job.meta["kind"] == view.AWARE_JUDGE.name and job.meta["dataset"] == "dl19"
    args = build_parser().parse_args(job.command[3:])  # the CLI's own parser reads the job's command
    assert (args.command, args.judge, args.max_queries, args.cap, args.reasons) == ("aware-judge", "embedded", 8, 3,
                                                                                   None)
    assert args.progress_key == job.meta["progress"]
    assert at.button(key="aware_judge_start").disabled
