"""One dashboard per store (issue 30, item 11): a second ``streamlit run app.py`` on the same cache folder
used to start silently on the next port. Now it says where the first one runs (URL, pid) and shows
nothing else; a lock left by a dashboard that died never blocks the next one."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from core import dashboard_lock
from tests.browser.support import ROOT, free_port, launch_browser, start_streamlit, stop_streamlit

HOLD = ("import sys, time; from core import dashboard_lock; "
        "assert dashboard_lock.claim('http://localhost:1234') is None; print('held', flush=True); time.sleep(60)")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _holding_process():
    proc = subprocess.Popen([sys.executable, "-c", HOLD], cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_live_holder_is_named_and_a_dead_one_does_not_block(store):
    proc = _holding_process()
    try:
        other = dashboard_lock.claim("http://localhost:9999")
        assert other is not None and other.pid == proc.pid and other.url == "http://localhost:1234"
        assert "http://localhost:1234" in other.message(9999) and f"pid {proc.pid}" in other.message(9999)
        check = subprocess.run([sys.executable, "-m", "core.dashboard_lock"], cwd=ROOT, capture_output=True,
                               text=True)
        assert check.returncode == 1 and "http://localhost:1234" in check.stderr, check.stderr
    finally:
        proc.kill()
        proc.wait()
    # the holder died without a word (SIGKILL): its file is still there, its lock is not
    assert json.loads((store / dashboard_lock.LOCK_NAME).read_text())["pid"] == proc.pid
    check = subprocess.run([sys.executable, "-m", "core.dashboard_lock"], cwd=ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert dashboard_lock.claim("http://localhost:9999") is None  # this process serves the store now
    assert dashboard_lock.claim("http://localhost:9999") is None  # and keeps it
    assert json.loads((store / dashboard_lock.LOCK_NAME).read_text())["pid"] == os.getpid()
    dashboard_lock.release()
    assert dashboard_lock.holder() is None


@pytest.mark.browser
@pytest.mark.slow
def test_a_second_dashboard_on_the_same_store_says_where_the_first_runs(dashboard, tmp_path):
    from playwright.sync_api import sync_playwright


    second = None
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page()
        try:
            page.goto(dashboard)  # the first dashboard claims the store at its first script run
            page.get_by_text("IR ranking-loss and query-failure lab").first.wait_for(timeout=60_000)
            port = free_port()
            second = start_streamlit(port, tmp_path / "second.log")  # same environment: same cache folder
            page.goto(f"http://127.0.0.1:{port}/training")
            alert = page.locator("[data-testid='stAlert']", has_text="A dashboard already serves this store")
            alert.wait_for(timeout=60_000)
            text = alert.inner_text()
            assert f"http://127.0.0.1:{dashboard.port}" in text and f"pid {dashboard.server.pid}" in text, text
            assert f"This one (port {port}) shows nothing" in text, text
            assert page.get_by_text("Train a ranker").count() == 0  # the page itself is not drawn
            assert "irdash: A dashboard already serves this store" in (tmp_path / "second.log").read_text()
            # the first one dies (no clean exit): the second serves the store at its next run
            os.killpg(dashboard.server.pid, signal.SIGKILL)
            dashboard.server.wait(timeout=20)
            page.goto(f"http://127.0.0.1:{port}/training")
            page.get_by_text("Train a ranker").first.wait_for(timeout=60_000)
            assert page.locator("[data-testid='stAlert']", has_text="already serves").count() == 0
        finally:
            browser.close()
            if second is not None:
                stop_streamlit(second)
