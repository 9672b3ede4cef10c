"""In a real browser: annotate two queries by keyboard only, reload, and find both answers.

Same setup as ``tests/browser/test_browser_e2e.py`` (Debian's chromium driven by Playwright against a real
``streamlit run app.py`` with a private cache). The typology run behind the sample is made with a
scripted model (the model is not what is under test here; the annotation workflow is).
"""
from __future__ import annotations

import json
import os
import re
import sqlite3

import pytest

from pipeline.views import failure_typology as view
from pipeline.annotation.store import AnnotationStore
from pipeline.annotation.store import default_path as annotations_path
from pipeline.typology.induction import HardQuery, InductionConfig
from pipeline.typology.runner import run_typology
from pipeline.typology.store import TypologyStore
from tests.support.llm_helpers import scripted_client
from tests.browser.annotate_page import BLUR_JS, press, respond
from tests.browser.support import ARTIFACTS, CONNECTED_JS, choose_option, click, launch_browser, wait, when_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


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
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        try:
            page.goto(f"{dashboard}/annotate-reasons")
            field = page.get_by_label("Your name (asked once per browser session)")
            field.wait_for(timeout=60_000)
            when_idle(page)
            field.fill("ann")
            click(page, page.get_by_role("button", name="Start annotating"))
            expect(page.get_by_text("Query 1 of 3")).to_be_visible(timeout=60_000)
            expect(page.get_by_text(queue[0].query, exact=True)).to_be_visible()  # text, not HTML
            page.evaluate(BLUR_JS)  # keys go to the page, not to a form field

            press(page, "y")  # the highlighted (only) reason of query 1 is correct
            expect(page.get_by_text("Numbers — Marked correct")).to_be_visible(timeout=30_000)
            press(page, "ArrowRight")
            expect(page.get_by_text("Query 2 of 3")).to_be_visible(timeout=30_000)
            press(page, "n")  # ... and the one of query 2 is not
            expect(page.get_by_text("Numbers — Marked incorrect")).to_be_visible(timeout=30_000)
            wait(lambda: len(AnnotationStore().completed("ann")) == 2, 30, "both answers in the store")

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
        assert annotations.answers("ann", queue[0]) == {"Numbers": 1, "Ambiguity": 0}
        assert annotations.answers("ann", queue[1]) == {"Numbers": 0, "Ambiguity": 0}
        assert [h["source"] for h in annotations.history("ann")] == ["ui", "ui"]


# ------------------------------------------------------------------------- server restarts, two annotators
# Issue 19: with the Annotate page open, the server was killed and started again; the first click after
# each reconnect showed the pill selected but stored nothing (19 answers given, 17 stored), and the
# arrow keys did nothing until something was clicked. The walk below restarts the server between
# clicks of two annotators (both on the same query at once for the first answers), counts the stored
# answers against the given ones, and checks that the arrow keys work after a reconnect.
# IRDASH_SCREENSHOT_TAG=before|after names the screenshots annotate-<what>-<tag>.png (issue evidence).
SCREENSHOT_TAG = os.environ.get("IRDASH_SCREENSHOT_TAG", "")
TAG = "Jargon"  # never assigned by the model below: a tag is always an added reason


def shot(page, what: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"annotate-{what}{'-' + SCREENSHOT_TAG if SCREENSHOT_TAG else ''}.png"),
                    full_page=True)


def respond_walk(messages):
    text = messages[-1]["content"]
    if "In one sentence" in text:
        return "Reason: vague"
    if "Which of these categories" in text:
        if "walk query 4" in text:
            return "[]"  # the model sees no reason
        if "walk query 5" in text:
            return "I am not sure what you mean."  # unreadable: no list of categories at all
        return '[{"category": "Numbers", "justification": "asks for a figure"}]'
    return json.dumps([{"name": "Numbers", "description": "a figure"}, {"name": "Ambiguity", "description": "vague"},
                       {"name": TAG, "description": "product terms"}])


def _store_rows(sql: str, args=()) -> list:
    """Rows of the annotation store read with plain SQL (the same queries work on its older schema)."""
    conn = sqlite3.connect(annotations_path())
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def stored_value(annotator: str, qid: str, category: str):
    rows = _store_rows("SELECT human_applicable FROM decisions WHERE annotator = ? AND qid = ? AND category = ?",
                       (annotator, qid, category))
    return rows[0][0] if rows else None


def stored_answers(annotator: str) -> int:
    """How many answers (one history row each) the store recorded from the page for ``annotator``."""
    return len(_store_rows("SELECT 1 FROM history WHERE annotator = ? AND source = 'ui' AND field LIKE 'category:%'",
                           (annotator,)))


def test_answers_survive_server_restarts_for_two_annotators(dashboard, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    queries = [HardQuery(f"q{i}", f"walk query {i}", f"Top passages:\n[1] passage {i}") for i in range(1, 6)]
    with TypologyStore() as store:
        run_typology(scripted_client(respond_walk, tmp_path), store, dataset="dl19", task="h2r", queries=queries,
                     hard_set={}, config=InductionConfig(batch_size=5))
        items = view.sample_items(store)
    with AnnotationStore() as annotations:
        annotations.create_sample(items, size=5, seed=0)
        queue = annotations.queue("ann")
    given: list[tuple[str, str, str, int]] = []  # every answer clicked: (annotator, qid, category, value)
    keyboard_after_restart = []

    def last_given() -> dict:
        return {(name, qid, category): value for name, qid, category, value in given}

    def position(page) -> int:
        text = page.get_by_text(re.compile(r"^Query \d+ of 5")).first.inner_text(timeout=30_000)
        return int(re.match(r"Query (\d+)", text).group(1)) - 1

    def act(name: str, page, what: str) -> None:
        """Give one answer on the page's current query; ``mark`` falls back to a tag on a query without
        an assigned reason."""
        when_idle(page)
        item = queue[position(page)]
        if what in ("yes", "no") and item.assigned_names:
            click(page, page.locator(f".st-key-{what}-0 button"))  # "Correct" / "Incorrect" of the first reason
            given.append((name, item.qid, item.assigned_names[0], int(what == "yes")))
        else:  # a tag toggles
            click(page, page.locator('[data-testid=stButtonGroup]').get_by_text(TAG, exact=True))
            given.append((name, item.qid, TAG, 1 - last_given().get((name, item.qid, TAG), 0)))

    def settle(pages) -> None:
        for page in pages.values():
            page.wait_for_timeout(500)
            when_idle(page)
        try:  # give the store time; a lost answer never arrives (counted below, not raised here)
            wait(lambda: sum(map(stored_answers, pages)) == len(given), 10, "answers")
        except AssertionError:
            pass

    def restart(pages) -> None:
        dashboard.restart()
        for page in pages.values():
            page.wait_for_function(f"() => ({CONNECTED_JS})() === 'CONNECTED'", timeout=60_000)
            when_idle(page)
            page.wait_for_timeout(1000)

    with sync_playwright() as pw:
        browser = launch_browser(pw)
        pages = {name: browser.new_context(viewport={"width": 1400, "height": 1400}).new_page() for name in ("ann", "bob")}
        try:
            start = next(i for i, it in enumerate(queue) if it.assigned_names)  # a query with an assigned reason
            for name, page in pages.items():
                page.goto(f"{dashboard}/annotate-reasons?annotator={name}&dataset=dl19&task=h2r&qid={queue[start].qid}")
                expect(page.get_by_text(f"Query {start + 1} of 5")).to_be_visible(timeout=60_000)
            # both on the same query at once: the two clicks are sent without waiting for each other
            act("ann", pages["ann"], "yes")
            act("bob", pages["bob"], "tag")
            settle(pages)
            for round_no, (ann_does, bob_does) in enumerate([("tag", "no"), ("arrow", "yes"), ("no", "tag"),
                                                             ("tag", "yes")]):
                restart(pages)
                if ann_does == "arrow":  # the first thing after the reconnect is a key
                    before = position(pages["ann"])
                    pages["ann"].evaluate(BLUR_JS)
                    press(pages["ann"], "ArrowRight")
                    try:
                        wait(lambda: position(pages["ann"]) == before + 1, 15, "the next query")
                        keyboard_after_restart.append(True)
                    except AssertionError:
                        keyboard_after_restart.append(False)
                    act("ann", pages["ann"], "tag")
                else:
                    act("ann", pages["ann"], ann_does)
                act("bob", pages["bob"], bob_does)
                settle(pages)
                if round_no == 0:
                    shot(pages["ann"], "restart")
            final = last_given()
            counts = {"given": len(given), "stored": sum(map(stored_answers, pages)), "restarts": 4,
                      "keyboard_after_restart": keyboard_after_restart,
                      "final_values_wrong": [[*k, v, stored_value(*k)] for k, v in final.items()
                                             if stored_value(*k) != v]}
            ARTIFACTS.mkdir(exist_ok=True)
            (ARTIFACTS / f"annotate-restart-counts{'-' + SCREENSHOT_TAG if SCREENSHOT_TAG else ''}.json").write_text(
                json.dumps(counts, indent=1))
            shot(pages["ann"], "restart-end")
            assert counts["stored"] == counts["given"] and not counts["final_values_wrong"], counts
            assert keyboard_after_restart == [True], counts
        except BaseException:
            for name, page in pages.items():
                page.screenshot(path=str(ARTIFACTS / f"annotate-restart-failure-{name}.png"), full_page=True)
            raise
        finally:
            browser.close()


# ------------------------------------------------------------------------- states the page must tell apart
HOSTILE_NAMES = ["[x](javascript:alert(1))", "![img](http://127.0.0.1:9/x.png)"]


def respond_hostile(messages):
    text = messages[-1]["content"]
    if "In one sentence" in text:
        return "Reason: vague"
    if "Which of these categories" in text:
        return json.dumps([{"category": HOSTILE_NAMES[0], "justification": "see [here](javascript:alert(2)) **now**"}])
    return json.dumps([{"name": n, "description": "hostile"} for n in HOSTILE_NAMES])


def respond_unreadable(messages):
    text = messages[-1]["content"]
    if "Which of these categories" in text:
        return "no idea, sorry"
    return respond_walk(messages)


def test_unreadable_no_reason_and_hostile_names_in_the_browser(dashboard, tmp_path):
    """Issue 19 items 3 and 7, issue 18 safety: an unreadable assignment is its own state with its raw
    answer (never "assigned no reason"); after N, "No reason applies" shows as chosen and saved, not
    disabled; an all-unreadable typology draws no empty chart and says why; LLM-made category names
    and justifications stay literal text (no link, no image)."""
    from playwright.sync_api import expect, sync_playwright

    walk = [HardQuery(f"q{i}", f"walk query {i}", f"Top passages:\n[1] passage {i}") for i in (1, 4, 5)]
    with TypologyStore() as store:
        run_ids = [run_typology(scripted_client(respond, tmp_path / ds), store, dataset=ds, task="h2r",
                                queries=walk, hard_set={}, config=InductionConfig(batch_size=3))["run_id"]
                   for ds, respond in (("dl19", respond_walk), ("dl21", respond_hostile))]
        run_typology(scripted_client(respond_unreadable, tmp_path / "dl20"), store, dataset="dl20", task="h2r",
                     queries=walk, hard_set={}, config=InductionConfig(batch_size=3))
        items = view.sample_items(store, run_ids)
    with AnnotationStore() as annotations:
        annotations.create_sample(items, size=len(items), seed=0)
    base = f"{dashboard}/annotate-reasons?annotator=ann&task=h2r"
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1300})
        try:
            page.goto(f"{base}&dataset=dl19&qid=q5")
            expect(page.get_by_text("walk query 5", exact=True)).to_be_visible(timeout=60_000)
            when_idle(page)
            expect(page.get_by_text("The model's answer was unreadable", exact=False)).to_be_visible()
            expect(page.get_by_text("I am not sure what you mean.", exact=True)).to_be_visible()
            assert page.get_by_text("assigned no reason").count() == 0
            shot(page, "unreadable")

            page.goto(f"{base}&dataset=dl19&qid=q4")
            expect(page.get_by_text("walk query 4", exact=True)).to_be_visible(timeout=60_000)
            page.evaluate(BLUR_JS)
            press(page, "n")
            wait(lambda: len(AnnotationStore().completed("ann")) == 1, 30, "the confirmation in the store")
            when_idle(page)
            page.wait_for_timeout(500)
            shot(page, "no-reason")
            chosen = page.locator(".st-key-none-applies button").first
            expect(chosen).to_contain_text("No reason applies (saved)")
            expect(chosen).to_be_enabled()

            page.goto(f"{base}&dataset=dl21&qid=q1")
            expect(page.get_by_text("walk query 1", exact=True)).to_be_visible(timeout=60_000)
            when_idle(page)
            expect(page.locator("[data-testid=stButtonGroup]").get_by_text(HOSTILE_NAMES[1], exact=True)).to_be_visible()
            expect(page.get_by_text("see [here](javascript:alert(2)) **now**", exact=True)).to_be_visible()
            main = page.locator("[data-testid=stMain]")
            assert main.locator("a[href^='javascript']").count() == 0 and main.locator("img").count() == 0
            shot(page, "markdown")

            page.goto(f"{dashboard}/failure-typology")
            page.get_by_role("heading", name="Failure typology").first.wait_for(timeout=60_000)
            choose_option(page, page.locator("[data-testid=stSelectbox]").first, "DL20")
            page.wait_for_timeout(500)
            when_idle(page)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"typology-unreadable{'-' + SCREENSHOT_TAG if SCREENSHOT_TAG else ''}.png"),
                            full_page=True)
            expect(page.get_by_text("No chart: all 3 assignment answers were unreadable")).to_be_visible()
            assert page.locator(".js-plotly-plot").count() == 0
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "annotate-states-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
