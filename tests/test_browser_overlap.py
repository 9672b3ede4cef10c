"""End to end in a real browser: the "Failure overlap" page on the designed study.

A real ``streamlit run app.py`` (private cache holding the designed study, computed with the real
MiniLM BERTScore) and Debian's chromium through Playwright: the Venn diagram renders, a region is
clicked through to its query, and hostile passage text arrives as text (no element is created).
"""
from __future__ import annotations

import pytest

from tests.failure_fixture import RELEVANT, run_designed_study
from tests.test_browser_e2e import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, dashboard  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def study_in_cache(tmp_path, monkeypatch):
    # the dashboard fixture points IRDASH_CACHE_DIR at tmp_path / "cache"; write the study there first
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    run_designed_study(tmp_path / "designed")


def test_overlap_page_venn_and_click_through(study_in_cache, dashboard):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 2600})
        try:
            page.goto(f"{dashboard}/failure-overlap")
            page.get_by_text("Pairwise overlaps").wait_for(timeout=90_000)
            venn = page.locator("[data-testid='stImage'] img").first
            venn.wait_for(timeout=30_000)
            assert venn.evaluate("img => img.naturalWidth") > 100  # the figure really rendered
            page.get_by_text("H2R only (1)").click()
            page.get_by_text("Relevant passages (grade 2-3, with text): 1").wait_for(timeout=30_000)
            hostile = RELEVANT["q7"]
            page.get_by_text(hostile, exact=True).first.wait_for(timeout=30_000)
            # shown as text: the page holds no <script> or <b> made from the passage
            assert page.evaluate("() => document.querySelectorAll('.stMain b, .stMain script').length") == 0
            assert page.get_by_text("Page not found").count() == 0
            page.screenshot(path=str(ARTIFACTS / "failure_overlap.png"), full_page=True)
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "failure_overlap-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
