"""End to end in a real browser: the "Failure overlap" page on the designed study.

A real ``streamlit run app.py`` (private cache holding the designed study, computed with the real
MiniLM BERTScore) and Debian's chromium through Playwright: the Venn diagram renders, a region is
clicked *in the diagram* through to its query (AppTest cannot click inside a plotly chart), and hostile
passage text arrives as text (no element is created).
"""
from __future__ import annotations

import pytest

from tests.support.failure_fixture import RELEVANT, run_designed_study
from tests.browser.support import ARTIFACTS, REGION_POINT_JS, REGION_READY_JS, click, launch_browser, when_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHECKED_JS = """(label) => [...document.querySelectorAll('label')].some(
  l => l.innerText.trim() === label && l.querySelector('input[type=radio]') && l.querySelector('input').checked)"""


@pytest.fixture
def study_in_cache(tmp_path, monkeypatch):
    # the dashboard fixture points IRDASH_CACHE_DIR at tmp_path / "cache"; write the study there first
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    run_designed_study(tmp_path / "designed")


def test_overlap_page_venn_and_click_through(study_in_cache, dashboard):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 2600})
        try:
            page.goto(f"{dashboard}/failure-overlap")
            page.get_by_text("Pairwise overlaps").wait_for(timeout=90_000)
            page.wait_for_function(REGION_READY_JS, arg="h2r", timeout=90_000)
            # the page opens on the H2R-only region (q7); a click inside the H2J-only region selects it (q1)
            assert page.get_by_role("radio", name="H2R only (1)").is_checked()
            when_idle(page)  # the diagram is drawn where it stays
            page.mouse.click(*page.evaluate(REGION_POINT_JS, "h2j"))
            page.wait_for_function(CHECKED_JS, arg="H2J only (1)", timeout=60_000)
            page.locator("[data-testid='stText']", has_text="boiling point of water").first.wait_for(timeout=30_000)
            page.wait_for_function(REGION_READY_JS, arg="h2r", timeout=60_000)
            when_idle(page)
            page.mouse.click(*page.evaluate(REGION_POINT_JS, "h2r"))  # back to H2R only: q7
            page.wait_for_function(CHECKED_JS, arg="H2R only (1)", timeout=60_000)
            # the region's queries are listed: q7, whose passage is behind the collapsed expander
            click(page, page.get_by_text("Relevant passages with text: 1 (grade 3: 1)", exact=False))
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
