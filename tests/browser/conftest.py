"""Fixtures of the real-browser tests (helpers in ``tests/browser/support.py``)."""
from __future__ import annotations

import os
import signal

import pytest

from core import jobs
from tests.browser.support import CHROMIUM, DashboardURL, free_port, stop_streamlit


@pytest.fixture
def dashboard(tmp_path, monkeypatch):
    """``streamlit run app.py`` with a private cache; yields its URL (a :class:`DashboardURL`); stops
    it, its jobs and the worker."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium package (apt-get install chromium) "
                    "to run the browser test")
    pytest.importorskip("playwright.sync_api", reason="playwright (Python package) is not installed")
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    monkeypatch.delenv(jobs.LIMITS_ENV, raising=False)
    url = DashboardURL(free_port(), tmp_path / "streamlit.log")
    try:
        yield url
    finally:
        for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
            jobs.cancel(job.id)
        info = jobs.worker_info()
        if info and info["alive"]:
            os.kill(info["pid"], signal.SIGTERM)
        stop_streamlit(url.server)
