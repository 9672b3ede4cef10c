"""Driving the Annotate reasons page in Chromium: the page's idle and connection states, keys pressed
once the page listens, a selectbox option picked once the list opens, and the scripted typology model
whose runs the annotation tests annotate."""
from __future__ import annotations

import json

BLUR_JS = "() => document.activeElement && document.activeElement.blur()"
IDLE_JS = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"
CONNECTED_JS = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-connection-state')"
ANSWER_KEYS_JS = "() => document.documentElement.dataset.irdashAnswerKeys === 'ready'"


def choose_option(page, selectbox, name: str, tries: int = 3) -> None:
    """Open a selectbox and pick `name`, once the page's script has finished.

    A click that lands while the script is still drawing can hit a selectbox that is then replaced, so its
    list never opens (CI, stop 31: the option never appeared in 30 s). Wait for the idle page, open, and
    try again if the list did not open."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries):
        page.wait_for_function(IDLE_JS, timeout=60_000)
        selectbox.click()
        option = page.get_by_role("option", name=name, exact=True)
        try:
            option.wait_for(timeout=10_000)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        option.click()
        return
    raise AssertionError(f"the selectbox's option {name!r} never appeared after {tries} tries")


def press(page, key: str) -> None:
    """Press ``key`` once the app is idle: a key pressed while a script run redraws the buttons is lost;
    Y / N once the page's answer keys listen (pages/answer_outbox.js, loaded after the first draw)."""
    page.wait_for_function(IDLE_JS, timeout=60_000)
    page.wait_for_timeout(300)
    page.wait_for_function(IDLE_JS, timeout=60_000)
    if key.lower() in ("y", "n"):
        page.wait_for_function(ANSWER_KEYS_JS, timeout=60_000)
    page.keyboard.press(key)


def respond(messages):
    """The scripted typology model of the annotation tests: every query vague, assigned "Numbers"."""
    text = messages[-1]["content"]
    if "In one sentence" in text:
        return "Reason: vague"
    if "Which of these categories" in text:
        return '[{"category": "Numbers", "justification": "asks for a figure"}]'
    return json.dumps([{"name": "Numbers", "description": "a figure"}, {"name": "Ambiguity", "description": "vague"}])
