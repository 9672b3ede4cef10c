"""The pages' jobs panel: lists the page's jobs once per draw and keeps them live."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core import jobs


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")
    return tmp_path


def _panel_script():
    import streamlit as st

    from pages import live_jobs

    calls = st.session_state.setdefault("calls", [])

    def list_jobs():
        calls.append(1)
        return []

    live_jobs(list_jobs, lambda job_list: st.write(f"{len(job_list)} jobs"))


def test_the_first_draw_lists_the_jobs_once(cache):
    at = AppTest.from_function(_panel_script, default_timeout=30)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.session_state["calls"]) == 1  # the list the page run draws around the panel is the panel's
