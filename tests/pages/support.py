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


def page_alone(page: str, timeout: float = TIMEOUT) -> AppTest:
    """``pages/<page>.py`` run on its own (not through the app's navigation), once, with no exception."""
    at = AppTest.from_file(str(paths.PAGES / f"{page}.py"), default_timeout=timeout)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_query_page(**params) -> AppTest:
    """The Query page opened through the app's navigation with these query parameters (``dataset``, ``qid``),
    run without an exception."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/query.py")
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


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


def store_designed_study(cache, folder) -> dict:
    """The designed study as ``run_study`` stored it (``tests/fixtures/study_before_generic_tasks.json``: the
    collection of ``tests/support/failure_fixture.py``, answers lacking q3, a second judge lacking q5's pairs),
    stored in ``cache`` as a DL19 study whose data folder (under ``folder``) holds its topics, qrels and passages
    under DL19's file names and whose retriever's run file is written anew there: the Query page's tests read
    it as stored, with no BERTScore to compute. Returns the stored JSON."""
    import shutil

    from tests.support.failure_fixture import write_collection

    files = write_collection(folder / "designed")
    data = folder / "trec_dl"
    data.mkdir()
    for name, as_name in (("topics.tsv", "topics.dl19-passage.txt"), ("qrels.txt", "qrels.dl19-passage.txt"),
                          ("passages.tsv", "passages.msmarco-v1.dl19-dl20.tsv")):
        shutil.copy(files[name], data / as_name)
    study = json.loads((paths.ROOT / "tests" / "fixtures" / "study_before_generic_tasks.json").read_text())
    study.update(dataset="dl19", data_folder=str(data))
    study["retrievers"]["designed-run"]["info"]["path"] = str(files["run.txt"])
    target = cache / "failure" / "dl19" / "studies" / f"{study['id']}.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(study))
    return study
