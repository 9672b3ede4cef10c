"""Driving the Annotate reasons page in Chromium: keys pressed once the page listens, and the scripted
typology model whose runs the annotation tests annotate (the page's idle and connection states, clicks and
selectbox choices are in ``tests/browser/support.py``)."""
from __future__ import annotations

import json

from tests.browser.support import when_idle

BLUR_JS = "() => document.activeElement && document.activeElement.blur()"
ANSWER_KEYS_JS = "() => document.documentElement.dataset.irdashAnswerKeys === 'ready'"


def press(page, key: str) -> None:
    """Press ``key`` once the app is idle: a key pressed while a script run redraws the buttons is lost;
    Y / N once the page's answer keys listen (pages/answer_outbox.js, loaded after the first draw)."""
    when_idle(page)
    page.wait_for_timeout(300)
    when_idle(page)
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
