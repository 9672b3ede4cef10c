"""In a real browser: open the "Difficulty-aware generation" page, see both generations of a query side
by side, step to the next and previous query, and find untrusted text shown as text.

Same setup as tests/browser/test_browser_e2e.py (Debian's chromium through Playwright, a real
``streamlit run app.py`` with a private cache); the result it shows is a scripted run stored in that cache.
"""
from __future__ import annotations

import pytest

from pipeline.llm.base import SMALL_MODEL
from tests.support.preference_helpers import HOSTILE, stored_result
from tests.browser.support import ARTIFACTS, click, launch_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _code(page, text: str):
    """The one text block (st.code) holding ``text``."""
    return page.locator("pre", has_text=text)


def test_open_a_query_and_see_both_generations(dashboard):  # noqa: F811
    from playwright.sync_api import sync_playwright

    stored_result(small_judge=True)  # into the server's cache (the fixture set IRDASH_CACHE_DIR)
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        dialogs = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        try:
            page.goto(f"{dashboard}/difficulty-aware-generation")
            page.get_by_text("Side by side").wait_for(timeout=120_000)
            baseline = _code(page, "base answer to how many moons has mars")
            aware = _code(page, "aware answer to how many moons has mars")
            baseline.wait_for(timeout=120_000)
            aware.wait_for(timeout=30_000)  # Streamlit streams the page: the second column may come later
            # side by side: the two answers sit in two columns at the same height
            b, a = baseline.bounding_box(), aware.bounding_box()
            assert a["x"] > b["x"] + b["width"] and abs(a["y"] - b["y"]) < 40
            page.get_by_text(SMALL_MODEL, exact=False).first.wait_for(timeout=30_000)
            _code(page, "+ This query requires numerical data.").wait_for(timeout=30_000)

            click(page, page.get_by_role("button", name="Next"))
            _code(page, "aware answer to iphone 12 battery life").wait_for(timeout=120_000)
            page.get_by_text("tie: the two orders disagree", exact=False).first.wait_for(timeout=30_000)

            click(page, page.get_by_role("button", name="Previous"))
            _code(page, "aware answer to how many moons has mars").wait_for(timeout=120_000)
            click(page, page.get_by_role("button", name="Previous"))  # back past the first query: wraps to the last
            _code(page, f"base answer to {HOSTILE}").wait_for(timeout=120_000)
            assert page.locator("b", has_text="prism").count() == 0  # the query's <b> was not rendered
            assert dialogs == []  # the query's <script> never ran
            page.screenshot(path=str(ARTIFACTS / "difficulty_preference.png"), full_page=True, timeout=120_000)
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "difficulty_preference-failure.png"), full_page=True, timeout=120_000)
            raise
        finally:
            browser.close()
