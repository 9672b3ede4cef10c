"""The "Failure overlap" page (AppTest) on the designed study, and its view module."""
from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core import jobs
from pipeline import overlap_view as view
from pipeline.h2r import hard_set, set_summary
from pipeline.judging import DEFAULT_CAP
from tests.failure_fixture import TOPICS, run_designed_study

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "failure-overlap.py")
LABEL = "designed-run | designed-answers | designed-judge | binary"


@pytest.fixture(scope="module")
def designed_study_file(tmp_path_factory):
    """The designed study, computed once (real MiniLM BERTScore) into its own cache."""
    cache_dir = tmp_path_factory.mktemp("study-cache")
    old = os.environ.get("IRDASH_CACHE_DIR")
    os.environ["IRDASH_CACHE_DIR"] = str(cache_dir)
    try:
        run_designed_study(tmp_path_factory.mktemp("designed"))
    finally:
        os.environ["IRDASH_CACHE_DIR"] = old
    return cache_dir / "failure" / "designed" / "study.json"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv("IRDASH_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.delenv("IRDASH_DATA_TREC_DL", raising=False)
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")  # queued jobs never start
    st.cache_data.clear()
    st.cache_resource.clear()
    yield cache_dir
    for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
        jobs.cancel(job.id)
    info = jobs.worker_info()
    if info and info["alive"]:
        os.kill(info["pid"], signal.SIGKILL)


@pytest.fixture
def with_study(cache, designed_study_file):
    target = cache / "failure" / "designed" / "study.json"
    target.parent.mkdir(parents=True)
    shutil.copy(designed_study_file, target)
    return target


def _page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_page_without_study(cache):
    at = _page()
    assert at.title[0].value == "Failure overlap"
    assert "No study yet" in at.info[0].value


def test_page_shows_venn_tables_and_region_queries(with_study):
    at = _page()
    assert at.selectbox[1].value == "designed"
    assert [s.value for s in at.selectbox[2:6]] == ["designed-run", "designed-answers", "designed-judge", "binary"]
    assert len(at.get("image")) == 1  # the matplotlib-venn figure
    summary = at.dataframe[0].value.set_index("figure")
    assert summary.loc["hard in all three", "queries"] == 1 and summary.loc["hard in all three", "value"] == 1 / 8
    regions = at.dataframe[1].value.set_index("region")
    assert regions.loc["all three", "queries"] == 1 and regions["queries"].sum() == 4  # q1, q6, q7, q8
    pairs = at.dataframe[2].value
    assert pairs["overlap"].tolist() == [1, 1, 1]
    assert not at.warning  # no 135M model in this configuration
    # click through: the H2R-only region holds q7, whose query and passage are hostile HTML shown as text
    at.radio[0].set_value("h2r").run()
    assert not at.exception
    queries = at.dataframe[3].value
    assert queries["qid"].tolist() == ["q7"] and queries.loc[0, "query"] == TOPICS["q7"]
    assert queries.loc[0, "nDCG@10"] == 0.0
    texts = [t.value for t in at.text]
    assert TOPICS["q7"] in texts and "<script>alert('x')</script> tags are <b>HTML</b> markup elements." in texts
    at.radio[0].set_value("h2r&h2g&h2j").run()
    assert at.dataframe[3].value["qid"].tolist() == ["q8"]
    stability = at.dataframe[4].value
    assert len(stability) == 2 and set(stability["largest pair"]) <= {"H2R∩H2G", "H2R∩H2J", "H2G∩H2J"}


def test_page_warns_about_a_135m_configuration(with_study):
    study = json.loads(with_study.read_text())
    study["configurations"][LABEL]["note"] = "generator from a 135M model: exercises the pipeline, not a finding"
    with_study.write_text(json.dumps(study))
    at = _page()
    assert "not a finding" in at.warning[0].value


def cli_default_cap() -> int:
    from pipeline.cli import build_parser

    return build_parser().parse_args(["h2j", "--qrels", "x", "--judge", "j"]).cap


def test_page_reports_set_sizes_and_warns_when_ties_decide(with_study):
    at = _page()
    captions = [c.value for c in at.caption]
    # designed study: 8 queries, target floor(7 * 0.25) + 1 = 2, every set 2 of 8 without a tie decision
    assert "Hard to judge: 2 of 8 queries (25%); threshold 0.25, target 2, tie block of 2 at 1" in captions
    assert any("0 of 8 answered queries have only some" in c for c in captions)
    assert not at.warning
    # a capped judge's shares: 1 above a block of 5 at 0.5 (target 2): sizes 1 or 6 -> 1, the block left out
    study = json.loads(with_study.read_text())
    config = study["configurations"][LABEL]
    shares = dict(zip([f"q{i}" for i in range(1, 9)], [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0, 0.0]))
    config["set_info"]["h2j"] = set_summary(hard_set(shares, 0.25, "h2j", top=True))
    with_study.write_text(json.dumps(study))
    at = _page()
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("Hard to judge: ties decide membership.") and "5 queries tie at 0.5" in warning
    assert "left out" in warning and "1 of 8" in warning


def test_start_run_queues_a_background_job(with_study):
    at = _page()
    at.button[0].click().run()
    assert not at.exception
    (job,) = jobs.list_jobs()
    assert job.command[1:4] == ["-m", "pipeline", "run"] and job.meta["kind"] == view.JOB_KIND
    # the page's cap is the one default (pipeline.judging.DEFAULT_CAP), as the CLI's
    assert job.command[job.command.index("--cap") + 1] == str(DEFAULT_CAP) == str(cli_default_cap())
    assert job.command[job.command.index("--partial-references") + 1] == "exclude" and job.status == "queued"
    assert at.button[0].disabled  # one study run at a time


def test_study_command_uses_the_data_folder_judgments(shared_dir):
    folder = shared_dir / "data" / "trec_dl"
    command = view.study_command("dl20", folder, generator="embedded", judge_llm="embedded", cap=3)
    judges = [command[i + 1] for i, c in enumerate(command) if c == "--judge"]
    assert judges == ["flan-t5-large", "llama-3.3-70b", "embedded"]
