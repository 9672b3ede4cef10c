"""The "Difficulty-aware generation" page (AppTest) and pipeline.views.difficulty_aware_generation, on a scripted stored result."""
from __future__ import annotations


import pytest
from streamlit.testing.v1 import AppTest

from pipeline.findings.preference import paper_rates
from pipeline.prompting import preference
from pipeline.views import difficulty_aware_generation as pv
from pipeline.llm.base import SMALL_MODEL
from pipeline.prompting.jobs import prefer_command
from tests.support.preference_helpers import HOSTILE, stored_result
from tests.pages.support import page_alone
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")
TIMEOUT = 60


def _page() -> AppTest:
    return page_alone("difficulty-aware-generation")


def _codes(at: AppTest) -> list[str]:
    return [c.value for c in at.code]


def test_view_summary_and_selection(cache):
    result = stored_result(small_judge=True)
    (path,) = pv.available()["dl19"]
    assert pv.load(path)["id"] == result["id"]
    frame = pv.summary_frame({"dl19": result})
    row = frame.iloc[0]
    assert (row["wins"], row["ties"], row["losses"], row["unparseable"]) == (1, 1, 1, 1)
    assert row["study rate"] == 0.6456 and SMALL_MODEL in row["judge"]
    assert set(pv.summary_frame({"dl19": result}, "category")["group"]) == {
        "category Numerical data requirements", "category Specific product terminology",
        "category Need for recent information"}
    assert pv.csv_bytes(frame).decode().splitlines()[0].startswith("dataset,group,judge")
    fig = pv.summary_figure(frame)
    bars, verdicts, study = fig.data
    assert list(bars.y) == [pytest.approx(1 / 3)] and list(study.y) == list(paper_rates().values())
    assert SMALL_MODEL in fig.layout.title.text
    assert [p["qid"] for p in pv.select_pairs(result, "all tasks and categories", "only wins")] == ["q1"]
    assert [p["qid"] for p in pv.select_pairs(result, "task H2G")] == ["q3"]
    assert [p["qid"] for p in pv.select_pairs(result, outcome_filter="only inconsistent")] == ["q2"]
    keys = ["a", "b", "c"]
    assert (pv.neighbour(keys, "a", -1), pv.neighbour(keys, "c", 1), pv.neighbour(keys, "x", 1)) == ("c", "a", "a")
    assert SMALL_MODEL in pv.small_model_warning(result)


def test_page_without_results_shows_the_study_figures(cache):
    at = _page()
    assert at.title[0].value == "Difficulty-aware generation"
    assert "python -m pipeline prefer" in at.info[0].value
    assert at.dataframe[0].value["study rate"].tolist() == [0.6456, 0.7540, 0.5277, 0.6049]


def test_page_side_by_side_navigation_and_filters(cache):
    stored_result(small_judge=True)
    at = _page()
    assert SMALL_MODEL in at.warning[0].value
    summary = at.dataframe[0].value
    assert summary["preference rate"].tolist() == [pytest.approx(1 / 3)] and summary["study rate"].tolist() == [0.6456]
    assert len(at.get("plotly_chart")) == 1 and at.get("download_button")
    # the first pair: both answers, the difficulty sentence and the prompt change, all as text
    assert at.selectbox(key="pref_pair").value == "q1|h2r"
    codes = _codes(at)
    assert "base answer to how many moons has mars" in codes and "aware answer to how many moons has mars" in codes
    assert "This query requires numerical data." in codes
    diff = next(c for c in codes if c.startswith("  [system]"))
    assert [line for line in diff.splitlines() if line.startswith(("+", "-"))] == ["+ This query requires numerical data."]
    verdicts = at.dataframe[2].value
    assert verdicts["prefers"].tolist() == ["difficulty-aware", "difficulty-aware"]
    assert at.dataframe[1].value["query page"].tolist() == ["query?dataset=dl19&qid=q1"]  # the pair's Query page
    assert at.dataframe[3].value["grade"].tolist() == [3, 2]  # grade 1 and 0 passages never reach the judge
    # next / previous wrap around the four pairs
    next_button = next(b for b in at.button if b.label == "Next")
    next_button.click().run()
    assert at.selectbox(key="pref_pair").value == "q2|h2r"
    assert any("tie: the two orders disagree" in m.value for m in at.markdown)
    next(b for b in at.button if b.label == "Previous").click().run()
    next(b for b in at.button if b.label == "Previous").click().run()
    assert at.selectbox(key="pref_pair").value == "q4|h2r"
    assert HOSTILE in _codes(at)  # shown verbatim as text, never rendered
    assert at.dataframe[2].value["parsed"].tolist() == ["B", "unparseable"]
    # filters
    at.radio(key="pref_filter").set_value("only losses").run()
    assert at.selectbox(key="pref_pair").options == [pv.pair_label(p) for p in [_pair(at, "q3")]]
    at.selectbox(key="pref_group").set_value("task H2R").run()
    assert "No pair matches these filters." in at.info[0].value
    at.radio(key="summary_by").set_value("category").run()
    assert not at.exception and len(at.dataframe[0].value) == 3


def _pair(at: AppTest, qid: str) -> dict:
    (path,) = pv.available()["dl19"]
    return next(p for p in pv.load(path)["pairs"] if p["qid"] == qid)


def test_page_is_registered_in_the_query_failure_section(cache):
    stored_result()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/difficulty-aware-generation.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Difficulty-aware generation"
    assert not at.warning  # a scripted judge is not a 135M model


def _stop_jobs_and_worker() -> None:
    """Cancel the jobs a test queued and kill the job worker the page started, if any."""
    import os
    import signal

    from core import jobs

    for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
        jobs.cancel(job.id)
    info = jobs.worker_info()
    if info and info["alive"]:
        os.kill(info["pid"], signal.SIGKILL)


def test_page_starts_a_comparison_job_like_the_other_pages(cache, monkeypatch):
    from core import jobs

    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")  # the job stays queued
    try:
        at = _page()
        next(t for t in at.text_input if t.label == "Pairwise judge (LLM spec)").set_value("embedded")
        next(b for b in at.button if b.label == "Start").click().run()
        assert not at.exception
        (job,) = jobs.list_jobs()
        assert job.command[1:4] == ["-m", "pipeline", "prefer"] and job.meta["kind"] == pv.PREFERENCE.name
        assert job.command[job.command.index("--judge") + 1] == "embedded"
        assert "--allow-self-judging" not in job.command
        assert job.command[job.command.index("--max-queries") + 1] == "10"
        assert next(b for b in at.button if b.label == "Start").disabled
        frame = pv.jobs_frame(jobs.list_jobs())
        assert frame.loc[0, "status"] == "queued" and "limit is 0" in frame.loc[0, "progress"]  # why it waits
    finally:
        _stop_jobs_and_worker()
    with pytest.raises(ValueError, match="reasons must be one of"):
        prefer_command("dl19", None, reasons="nope")
    with pytest.raises(ValueError, match="would judge its own answers"):
        prefer_command("dl19", None, generator="embedded", judge="embedded")
    allowed = prefer_command("dl19", None, generator="embedded", judge="embedded", allow_self_judging=True)
    assert allowed[-1] == "--allow-self-judging"
    from pipeline.cli import build_parser  # the command parses with the CLI's own parser (option names agree)
    assert build_parser().parse_args(allowed[3:]).allow_self_judging


def _stored(dataset: str, judge_model: str) -> dict:
    import dataclasses
    import time

    from pipeline.data.datasets import DATASETS
    from tests.support import preference_helpers as h

    generator = h.client(h.generate, "generator")
    data = dataclasses.replace(h.data(), spec=DATASETS[dataset])
    result = preference.run_preference(data, h.assignments(), h.TYPOLOGY, h.TEMPLATES, h.client(h.judge, judge_model),
                                       preference.AnswerSide(generator), preference.AnswerSide(generator))
    preference.save_result(result)
    time.sleep(0.02)  # distinct modification times: "newest" is well defined
    return result


def test_summary_compares_datasets_within_one_configuration(cache):
    """The newest DL19 result is by judge B, DL20 only has judge A: the summary never puts B's DL19 beside
    A's DL20. Configuration A covers both datasets, so it is the default; B is offered on its own."""
    a19, a20, b19 = _stored("dl19", "judge-a"), _stored("dl20", "judge-a"), _stored("dl19", "judge-b")
    loaded = {d: [(p, pv.load(p)) for p in paths] for d, paths in pv.available().items()}
    configs = pv.configurations(loaded)
    (first, second) = configs
    assert {d: r["id"] for d, r in configs[first].items()} == {"dl19": a19["id"], "dl20": a20["id"]}
    assert {d: r["id"] for d, r in configs[second].items()} == {"dl19": b19["id"]}
    assert first.startswith("judge scripted:judge-a · baseline scripted:generator") and "judge-b" in second
    at = _page()
    assert at.selectbox(key="summary_configuration").value == first
    summary = at.dataframe[0].value
    assert summary["dataset"].tolist() == ["DL19", "DL20"] and set(summary["judge"]) == {"scripted:judge-a"}
    assert summary["verdict rate"].tolist() == [pytest.approx(4 / 7)] * 2  # q1 2, q2 1, q3 0, q4 1 of 7 verdicts
    assert any("verdict rule" in c.value for c in at.caption) and any("do not say" in c.value for c in at.caption)
    at.selectbox(key="summary_configuration").set_value(second).run()
    summary = at.dataframe[0].value
    assert summary["dataset"].tolist() == ["DL19"] and set(summary["judge"]) == {"scripted:judge-b"}


def test_a_running_comparison_row_shows_stage_n_of_m(cache, monkeypatch):
    """The job the page queues names its progress record (``--progress-key``, ``meta["progress"]``);
    while it runs, the jobs table reads it: stage n of m, answers or calls done of total."""
    from dataclasses import replace

    from core import jobs
    from core.jobs.progress import ProgressWriter

    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")  # the job stays queued
    try:
        job_id = pv.submit_preference("dl19", None, generator="auto", judge="embedded")
        (job,) = pv.PREFERENCE.jobs()
        key = job.meta["progress"]
        assert job.id == job_id and job.command[job.command.index("--progress-key") + 1] == key
        writer = ProgressWriter(key, stages=4, interval=0)  # assigning reasons, baseline, aware, judging
        writer.stage("assigning reasons to the H2R hard queries", 5, "query")
        writer.advance(5)
        writer.stage("baseline answers (one per query)", 5, "answer")
        writer.advance(2)
        frame = pv.jobs_frame([replace(job, status="running")])
        assert frame.loc[0, "progress"].startswith("stage 2 of 4: baseline answers (one per query) · 2/5 answers")
    finally:
        _stop_jobs_and_worker()
