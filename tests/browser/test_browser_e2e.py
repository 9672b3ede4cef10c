"""End to end in a real browser: start training through the UI and watch θ_d arrive live.

Headless Chromium is Debian's ``chromium`` package driven by Playwright (Playwright never downloads
a browser here); the dashboard is a real ``streamlit run app.py`` on a free localhost port with a
private cache, so the job runner, the trainer and the run store are the real ones.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core import jobs
from tests.browser.support import ARTIFACTS, ROOT, click, enter_value, launch_browser, wait, when_idle

# Total points on the θ_d chart, as plotly holds them in the page.
THETA_POINTS_JS = """() => {
  const plot = document.querySelector('.st-key-param_chart .js-plotly-plot');
  if (!plot || !plot._fullData) return -1;
  return plot._fullData.reduce((n, trace) => n + (trace.x ? trace.x.length : 0), 0);
}"""

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _navigation() -> list[tuple[str, str]]:
    """``(url path, sidebar title)`` of every page in app.py's st.navigation, in order."""
    import ast

    out = []
    for node in ast.walk(ast.parse((ROOT / "app.py").read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page":
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            out.append(("" if kwargs.get("default") else Path(node.args[0].value).stem, kwargs["title"]))
    return out


# Every page by its deep link; the pages of this issue also by their first heading.
NAVIGATION = _navigation()
SIDEBAR = [title for _, title in NAVIGATION]
HEADINGS = {"": "IR ranking-loss and query-failure lab", "training": "Train a ranker", "results": "Compare losses",
            "hard-to-retrieve": "Hard to retrieve"}


@pytest.mark.parametrize("url_path", [url for url, _ in NAVIGATION])
def test_deep_link_on_a_cold_server(dashboard, url_path):
    """A fresh server (this test's own) opened straight at a page's URL shows that page, through the
    app's navigation: each page once in the sidebar, no "Page not found", no exception, the URL kept."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{dashboard}/{url_path}")
            links = page.locator('[data-testid="stSidebarNavLink"]')
            links.first.wait_for(timeout=60_000)
            if url_path in HEADINGS:
                page.get_by_role("heading", name=HEADINGS[url_path]).first.wait_for(timeout=60_000)
            else:
                page.locator("h1").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)  # a stray legacy-mode run or "Page not found" would have begun by now
            when_idle(page)
            assert [t.strip().splitlines()[-1] for t in links.all_inner_texts()] == SIDEBAR  # after the icon
            assert page.get_by_text("Page not found").count() == 0
            assert page.locator('[data-testid="stException"]').count() == 0
            assert page.url.rstrip("/") == f"{dashboard}/{url_path}".rstrip("/")
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / f"deep-link-{url_path or 'home'}-failure.png"), full_page=True)
            raise
        finally:
            browser.close()


@pytest.fixture
def epoch_gate(tmp_path, monkeypatch) -> Path:
    """The trainer's test-only epoch gate (:mod:`ltr.train.epoch_gate`), set in the environment that the
    dashboard (requested after this fixture), its job worker and its trainer hosts inherit."""
    from ltr.train.epoch_gate import EPOCH_GATE_ENV

    gate = tmp_path / "epoch-gate"
    monkeypatch.setenv(EPOCH_GATE_ENV, str(gate))
    return gate


def _allow_epochs(gate: Path, n: int) -> None:
    tmp = gate.with_suffix(".tmp")
    tmp.write_text(str(n))
    os.replace(tmp, gate)


def test_train_from_the_ui_and_watch_theta_d(epoch_gate, dashboard):
    """Start a run through the UI, watch θ_d grow, cancel it through the UI. The trainer may start only
    the epochs the test allows (the epoch gate), so the run is provably still running at the click,
    however fast the machine trains (a quiet one finished all 40 epochs before the click)."""
    from playwright.sync_api import sync_playwright

    from ltr.store import RunStore

    def run() -> dict:
        with RunStore() as store:
            return store.get_run(jobs.get_job(1).meta["run_ids"][0])

    ARTIFACTS.mkdir(exist_ok=True)
    _allow_epochs(epoch_gate, 1)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 2200})
        try:
            page.goto(f"{dashboard}/training")
            page.get_by_role("button", name="Start training").wait_for(timeout=60_000)
            # patience 0: no early stop either
            for label, value in (("Epochs", "40"), ("Patience (0 = never stop early)", "0")):
                enter_value(page, page.get_by_label(label), value)
            click(page, page.get_by_role("button", name="Start training"))
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
            _allow_epochs(epoch_gate, 2)  # one more epoch: the chart grows
            later = first
            while time.monotonic() < deadline and later <= first:
                page.wait_for_timeout(500)
                later = page.evaluate(THETA_POINTS_JS)
            assert later > first, f"the θ_d chart did not grow after its first update ({first} points)"
            assert page.get_by_text("Page not found").count() == 0
            page.screenshot(path=str(ARTIFACTS / "ltr_training.png"), full_page=True)

            # The run now waits at the gate before its third epoch: still running when Cancel is clicked.
            wait(lambda: run()["epochs_done"] == 2, 60, "the run to reach the gate after 2 epochs")
            assert run()["status"] == "running"
            click(page, page.get_by_role("button", name="Cancel #1"))
            job = wait(lambda: (j := jobs.get_job(1)).status != "running" and j, 30, "the job to be cancelled")
            assert job.status == "cancelled", job.log_tail
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "ltr_training-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    (job,) = jobs.list_jobs()
    assert job.command[3:5] == ["train", "--data"] and job.meta["data"] == "synthetic-mq2008"
    assert "--patience" in job.command and job.command[job.command.index("--patience") + 1] == "0"

    # The run trains on a long-lived trainer host (core.jobs.hosts), which stays up for the next job:
    # cancelling ends the run, stored as cancelled (never failed), not the host process.
    stopped = wait(lambda: (r := run())["status"] != "running" and r, 30, "the run to stop")
    assert stopped["status"] == "cancelled" and stopped["epochs_done"] == 2, stopped


def test_significance_downloads_are_made_on_click(dashboard):
    """The Results page's CSV and LaTeX downloads, which the page hands to Streamlit as callables (made
    on click, not on every render): a real click in Chromium yields the significance table of the stored
    runs, under its file name. The clicks follow each other as a researcher's do, without waiting for
    the page: while a download still reran the page, a click landing in that rerun got no file (CI, stop
    38; these alternating clicks got no file on every try before the fix, on the unloaded machine too)."""
    import numpy as np
    from playwright.sync_api import sync_playwright

    from ltr.store import RunStore

    rng = np.random.default_rng(0)
    with RunStore() as store:  # the dashboard's own store (its private cache)
        for loss, shift in (("approxndcg", 0.0), ("learndcg", 0.05)):
            for fold in (1, 2):
                run_id = f"{loss}-{fold}"
                store.register_run(run_id, {"data": "synthetic-mq2008", "fold": fold, "loss": loss, "model": "mlp",
                                            "seed": 0})
                store.start_run(run_id, device="cpu")
                values = {f"q{fold}-{i}": float(v) for i, v in enumerate(np.clip(rng.random(20) + shift, 0, 1))}
                per_query = {f"ndcg@{k}(gain=exp,norel=1)": values for k in (1, 3, 5, 10)}
                store.finish_run(run_id, test_means={f"ndcg@{k}": float(np.mean(list(values.values())))
                                                     for k in (1, 3, 5, 10)},
                                 per_query=per_query, train_seconds=1.0)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 2200}, accept_downloads=True)
        try:
            page.goto(f"{dashboard}/results")
            csv_button = page.get_by_role("button", name="Download CSV")
            tex_button = page.get_by_role("button", name="Download LaTeX")
            csv_button.wait_for(timeout=60_000)
            when_idle(page)
            files = []
            for button in (csv_button, tex_button) * 4:  # no wait between clicks
                with page.expect_download(timeout=30_000) as download:
                    button.click()
                files.append((download.value.suggested_filename, Path(download.value.path()).read_text()))
            when_idle(page)
            assert page.locator('[data-testid="stException"]').count() == 0
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "results-download-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    (csv_name, csv_text), (tex_name, tex_text) = files[:2]
    assert files == [files[0], files[1]] * 4  # every click, the same two files
    assert tex_name == "significance-synthetic-mq2008-mlp.tex"
    header, *rows = csv_text.strip().splitlines()
    assert "loss" in header.split(",") and "p@10" in header.split(",")
    assert sorted(r.split(",")[header.split(",").index("loss")] for r in rows) == ["approxndcg", "learndcg"]
    assert csv_name == "significance-synthetic-mq2008-mlp.csv"
    assert "\\begin{tabular}" in tex_text and "learndcg" in tex_text
