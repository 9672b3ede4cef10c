"""In a real browser: annotate two queries by keyboard only, reload, and find both answers.

Same setup as ``test_browser_e2e`` (Debian's chromium driven by Playwright against a real
``streamlit run app.py`` with a private cache). The typology run behind the sample is made with a
scripted model (the model is not what is under test here; the annotation workflow is).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import typology_view as view
from pipeline.annotations import AnnotationStore
from pipeline.typology.induction import HardQuery, InductionConfig
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore
from tests.llm_helpers import scripted_client
from tests.test_browser_e2e import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _wait, dashboard  # noqa: F401 (fixture)

BLUR_JS = "() => document.activeElement && document.activeElement.blur()"
IDLE_JS = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"


def press(page, key: str) -> None:
    """Press ``key`` once the app is idle: a key pressed while a script run redraws the buttons is lost."""
    page.wait_for_function(IDLE_JS, timeout=60_000)
    page.wait_for_timeout(300)
    page.wait_for_function(IDLE_JS, timeout=60_000)
    page.keyboard.press(key)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def respond(messages):
    text = messages[-1]["content"]
    if "In one sentence" in text:
        return "Reason: vague"
    if "Which of these categories" in text:
        return '[{"category": "Numbers", "justification": "asks for a figure"}]'
    return json.dumps([{"name": "Numbers", "description": "a figure"}, {"name": "Ambiguity", "description": "vague"}])


def test_annotate_two_queries_by_keyboard_and_reload(dashboard, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    queries = [HardQuery(f"q{i}", f"hard query {i} <b>bold?</b>", f"Top passages:\n[1] passage {i}") for i in (1, 2, 3)]
    with TypologyStore() as store:
        run_typology(scripted_client(respond, tmp_path), store, dataset="dl19", task="h2r", queries=queries,
                     hard_set={}, config=InductionConfig(batch_size=3))
        items = view.sample_items(store)
    with AnnotationStore() as annotations:
        annotations.create_sample(items, size=3, seed=0)
        queue = annotations.queue("ann")

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        try:
            page.goto(f"{dashboard}/annotate-reasons")
            page.get_by_label("Your name (asked once per browser session)").fill("ann")
            page.get_by_role("button", name="Start annotating").click()
            expect(page.get_by_text("Query 1 of 3")).to_be_visible(timeout=60_000)
            expect(page.get_by_text(queue[0].query, exact=True)).to_be_visible()  # text, not HTML
            page.evaluate(BLUR_JS)  # keys go to the page, not to a form field

            press(page, "y")  # the highlighted (only) reason of query 1 is correct
            expect(page.get_by_text("Numbers — Marked correct")).to_be_visible(timeout=30_000)
            press(page, "ArrowRight")
            expect(page.get_by_text("Query 2 of 3")).to_be_visible(timeout=30_000)
            press(page, "n")  # ... and the one of query 2 is not
            expect(page.get_by_text("Numbers — Marked incorrect")).to_be_visible(timeout=30_000)
            _wait(lambda: len(AnnotationStore().completed("ann")) == 2, 30, "both answers in the store")

            page.reload()  # a new session: the name and the query come back from the URL
            expect(page.get_by_text("Query 2 of 3")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Numbers — Marked incorrect")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("2 of 3 queries complete")).to_be_visible(timeout=30_000)
            page.evaluate(BLUR_JS)
            press(page, "ArrowLeft")
            expect(page.get_by_text("Query 1 of 3")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("Numbers — Marked correct")).to_be_visible(timeout=30_000)
            page.screenshot(path=str(ARTIFACTS / "annotate_reasons.png"), full_page=True)
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "annotate_reasons-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    with AnnotationStore() as annotations:
        assert annotations.answers("ann", queue[0].key) == {"Numbers": 1, "Ambiguity": 0}
        assert annotations.answers("ann", queue[1].key) == {"Numbers": 0, "Ambiguity": 0}
        assert [h["source"] for h in annotations.history("ann")] == ["ui", "ui"]
