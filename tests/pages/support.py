"""What the page tests share with each other and with the browser and typology tests: running a page
of the app under AppTest, reading its text, the scripted typology model and the forms' bad-input cases."""
from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.support import paths

APP = str(paths.APP)  # the app with its navigation, as AppTest.from_file takes it

TIMEOUT = 60  # seconds an AppTest run may take on a busy machine
CATEGORIES = [{"name": "Ambiguity", "description": "the subject is vague"},
              {"name": "Numbers", "description": "asks for a figure"},
              {"name": "Jargon", "description": "product terms"}]


def typology_reply(messages):
    """The scripted typology model: a reason per query, the categories above, and per query the
    categories it falls in ("query one" two of them, "query three" none)."""
    text = messages[-1]["content"]
    if "In one sentence" in text:
        return "Reason: it is vague"
    if "Which of these categories" in text:
        if "query one" in text:
            return '[{"category": "Ambiguity", "justification": "two senses <i>x</i>"}, {"category": "Numbers", "justification": "a price"}]'
        if "query three" in text:
            return "[]"  # the model sees no reason
        return '[{"category": "Numbers", "justification": "asks how many"}]'
    return json.dumps(CATEGORIES)


def app_page(page: str) -> AppTest:
    """The app (its navigation) switched to ``pages/<page>.py``, run once, with no exception."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def page_texts(at) -> str:
    """Every text, markdown, caption and alert the page shows, one a line."""
    return "\n".join(str(e.value) for kind in ("text", "markdown", "caption", "info", "warning", "error", "success")
                     for e in getattr(at, kind))


# The forms' out-of-range cases of issue 30: (page, text fields, number fields, start button, the errors
# expected); tests/pages/test_forms.py checks them under AppTest, tests/browser/test_browser_forms.py in Chromium.
ISSUE_CASES = {
    "training": ("training", {}, {"Epochs": -3, "Learning rate": -0.5}, "Start training",
                 ["Epochs: expected an integer >= 1, got -3", "Learning rate: expected a number > 0, got -0.5"]),
    "overlap": ("failure-overlap", {"LLM judge (LLM spec, empty for none)": "embedded"},
                {"Queries (0 = all)": -5, "Pairs per query (LLM judge)": -2}, "Start",
                ["Pairs per query (LLM judge): expected an integer >= 1, got -2",
                 "Queries (0 = all): expected an integer >= 0 (0 = no limit), got -5"]),
}
