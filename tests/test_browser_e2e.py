"""End to end in a real browser: start training through the UI and watch θ_d arrive live.

Headless Chromium is Debian's ``chromium`` package driven by Playwright (Playwright never downloads
a browser here); the dashboard is a real ``streamlit run app.py`` on a free localhost port with a
private cache, so the job runner, the trainer and the run store are the real ones.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from core import jobs

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Total points on the θ_d chart, as plotly holds them in the page.
THETA_POINTS_JS = """() => {
  const plot = document.querySelector('.st-key-param_chart .js-plotly-plot');
  if (!plot || !plot._fullData) return -1;
  return plot._fullData.reduce((n, trace) => n + (trace.x ? trace.x.length : 0), 0);
}"""

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# Every page by its deep link: URL path -> the page's title (its first heading).
PAGES = {"": "IR ranking-loss and query-failure lab", "training": "Train a ranker", "results": "Compare losses",
         "hard-to-retrieve": "Hard to retrieve"}
SIDEBAR = ["Home", "Training", "Results", "Hard to retrieve"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(predicate, timeout: float, what: str, poll: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture
def dashboard(tmp_path, monkeypatch):
    """``streamlit run app.py`` with a private cache; yields its URL; stops it, its jobs and the worker."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium package (apt-get install chromium) "
                    "to run the browser test")
    pytest.importorskip("playwright.sync_api", reason="playwright (Python package) is not installed")
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    monkeypatch.delenv(jobs.LIMITS_ENV, raising=False)
    port = _free_port()
    log = open(tmp_path / "streamlit.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def healthy():
        if server.poll() is not None:
            raise AssertionError(f"streamlit exited: {(tmp_path / 'streamlit.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    try:
        _wait(healthy, 60, "the streamlit server")
        yield url
    finally:
        for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
            jobs.cancel(job.id)
        info = jobs.worker_info()
        if info and info["alive"]:
            os.kill(info["pid"], signal.SIGTERM)
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
        log.close()


def _browser(pw):
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)


@pytest.mark.parametrize("url_path", list(PAGES))
def test_deep_link_on_a_cold_server(dashboard, url_path):
    """A fresh server (this test's own) opened straight at a page's URL shows that page, through the
    app's navigation: its title, each page once in the sidebar, no "Page not found"."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{dashboard}/{url_path}")
            page.get_by_role("heading", name=PAGES[url_path]).first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)  # a stray legacy-mode rerun or "Page not found" would show by now
            links = page.locator('[data-testid="stSidebarNavLink"]')
            assert [t.strip().splitlines()[-1] for t in links.all_inner_texts()] == SIDEBAR  # after the icon
            assert page.get_by_text("Page not found").count() == 0
            assert page.url.rstrip("/") == f"{dashboard}/{url_path}".rstrip("/")
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / f"deep-link-{url_path or 'home'}-failure.png"), full_page=True)
            raise
        finally:
            browser.close()


def test_train_from_the_ui_and_watch_theta_d(dashboard):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 2200})
        try:
            page.goto(f"{dashboard}/training")
            page.get_by_role("button", name="Start training").wait_for(timeout=60_000)
            # Long enough to watch several updates (patience 0: no early stop); the test cancels it.
            for label, value in (("Epochs", "40"), ("Patience (0 = never stop early)", "0")):
                field = page.get_by_label(label)
                field.fill(value)
                field.press("Enter")
                page.wait_for_timeout(1000)  # let the rerun that takes the new value finish
            page.get_by_role("button", name="Start training").click()
            page.get_by_text("Queued 1 job(s)").wait_for(timeout=30_000)

            # The fragment refreshes every 2 s; θ_d points arrive at each epoch-end flush of the trainer.
            deadline = time.monotonic() + 120
            first = -1
            while time.monotonic() < deadline:
                first = page.evaluate(THETA_POINTS_JS)
                if first > 0:
                    break
                page.wait_for_timeout(500)
            assert first > 0, "the θ_d chart never showed a point"
            later = first
            while time.monotonic() < deadline and later <= first:
                page.wait_for_timeout(500)
                later = page.evaluate(THETA_POINTS_JS)
            assert later > first, f"the θ_d chart did not grow after its first update ({first} points)"
            assert page.get_by_text("Page not found").count() == 0
            page.screenshot(path=str(ARTIFACTS / "ltr_training.png"), full_page=True)

            # Cancel through the UI: the job and its run end as cancelled.
            page.get_by_role("button", name="Cancel #1").click()
            job = _wait(lambda: (j := jobs.get_job(1)).status != "running" and j, 30, "the job to be cancelled")
            assert job.status == "cancelled", job.log_tail
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "ltr_training-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    (job,) = jobs.list_jobs()
    assert job.command[3:5] == ["train", "--data"] and job.meta["data"] == "synthetic-mq2008"
    assert "--patience" in job.command and job.command[job.command.index("--patience") + 1] == "0"
    _wait(lambda: job.pid and jobs.proc_start_time(job.pid) is None, 30, "the training process to exit")
    from ltr.store import RunStore

    with RunStore() as store:  # the trainer turns SIGTERM into a cancelled run, not a failed one
        assert store.get_run(job.meta["run_ids"][0])["status"] == "cancelled"
