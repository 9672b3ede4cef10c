"""The pages' one jobs panel (pages/panels/jobs.py): a page's jobs of one kind, listed once per draw."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core import jobs
from core.jobs import queue


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")  # nothing starts: the jobs stay queued
    return tmp_path


@pytest.fixture
def listings(monkeypatch):
    """The kinds each call of ``list_jobs`` listed (the panel's own list filters by its kind)."""
    calls = []
    real = queue.list_jobs

    def counting(**kwargs):
        calls.append((kwargs.get("meta") or {}).get("kind"))
        return real(**kwargs)

    monkeypatch.setattr(queue, "list_jobs", counting)
    return calls


def _panel_page(cancel_by_title: bool = False):
    import streamlit as st

    from core.jobs import JobKind
    from pages.panels.jobs import jobs_panel

    kind = JobKind(name="test.panel", label="panel jobs", command=lambda word: ["echo", word],
                   title=lambda word: f"echo {word}", meta=lambda word: {"word": word})
    st.session_state.setdefault("kind", kind)
    jobs_panel(kind, lambda job_list: [{"job": j.id, "status": j.status} for j in job_list],
               where={"word": "mine"}, empty="No panel job yet.",
               cancel=True if cancel_by_title else (lambda job: job.meta["word"]))


def _run(at=None, **page_args) -> AppTest:
    at = at or AppTest.from_function(_panel_page, default_timeout=30, kwargs=page_args)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_first_draw_lists_the_pages_jobs_once(cache, listings):
    _run()
    assert listings.count("test.panel") == 1  # the list the page run draws around the panel is the panel's


def test_the_panel_shows_the_pages_jobs_the_others_holding_a_resource_and_cancels(cache, listings):
    at = _run()
    assert [i.value for i in at.info] == ["No panel job yet."] and not at.dataframe
    kind = at.session_state["kind"]
    mine = kind.submit(word="mine", start_worker=False)
    kind.submit(word="other", start_worker=False)  # the same kind, not this page's selection
    other = jobs.submit(["true"], label="a shell job", start_worker=False)
    at = _run(at)
    resource_rows, own_rows = (d.value for d in at.dataframe)
    assert resource_rows["job"].tolist() == [other] and resource_rows["what"].tolist() == ["a shell job"]
    assert own_rows.to_dict("records") == [{"job": mine, "status": "queued"}]
    (button,) = at.button
    assert button.label == f"Cancel #{mine} · mine"
    button.click()
    _run(at)
    assert jobs.get_job(mine).status == "cancelled"


def test_a_cancel_button_without_a_tag_names_the_job_it_cancels(cache, listings):
    """``cancel=True`` (any kind without a short tag of its own) gave a bare "Cancel #7": which job it
    stopped was only on hover. It now carries the job's title."""
    at = _run(cancel_by_title=True)
    mine = at.session_state["kind"].submit(word="mine", start_worker=False)
    at = _run(at)
    (button,) = at.button
    assert button.label == f"Cancel #{mine} · echo mine"
    button.click()
    _run(at)
    assert jobs.get_job(mine).status == "cancelled"
