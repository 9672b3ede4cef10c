"""Every form with a bad number says which field and what is wrong, and starts nothing (issue 30, item 8).

The rules are the command lines' (core.fields): a form field and its flag accept the same values and
word a bad one the same way. Page tests under AppTest here; the same cases in real Chromium (where
the number inputs' own bounds used to swallow the entry) are in tests/browser/test_browser_forms.py.
"""
from __future__ import annotations

import argparse

import pytest
from streamlit.testing.v1 import AppTest

from core import fields, jobs
from tests.pages.support import ISSUE_CASES, TIMEOUT
from tests.support.paths import PAGES


def _page(name: str) -> AppTest:
    at = AppTest.from_file(str(PAGES / f"{name}.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _number(at: AppTest, label: str):
    return next(n for n in at.number_input if n.label == label)


def _errors(at: AppTest) -> str:
    return " | ".join(e.value for e in at.error)


# ---- the rules ------------------------------------------------------------------------------------
def test_a_rule_says_the_same_on_a_form_and_on_a_command_line():
    parse = fields.POSITIVE_INT.argparse_type()
    with pytest.raises(argparse.ArgumentTypeError) as flag:
        parse("-3")
    assert str(flag.value) == "expected an integer >= 1, got -3" == fields.POSITIVE_INT.problem(-3)
    assert fields.Field("Epochs", fields.POSITIVE_INT).problem(-3) == "Epochs: expected an integer >= 1, got -3"
    assert fields.POSITIVE_FLOAT.problem(-0.5) == "expected a number > 0, got -0.5"
    assert fields.POSITIVE_FLOAT.problem(0.0) and fields.POSITIVE_FLOAT.problem(float("nan"))
    assert fields.POSITIVE_INT.problem(2.5) and fields.POSITIVE_INT.problem(True)
    assert fields.ZERO_OR_POSITIVE_INT.problem(0) is None and fields.ZERO_OR_POSITIVE_INT.problem(-5)
    with pytest.raises(fields.FormError) as bad:
        fields.check_fields((fields.Field("A", fields.POSITIVE_INT), 1), (fields.Field("B", fields.POSITIVE_INT), 0),
                            (fields.Field("C", fields.POSITIVE_FLOAT), -1.0))
    assert bad.value.problems == ["B: expected an integer >= 1, got 0", "C: expected a number > 0, got -1.0"]


def test_the_clis_refuse_what_the_forms_refuse(capsys):
    """``ltr train --lr -0.5`` used to pass argparse (only the run config caught it); the flags now use
    the forms' rules and argparse names the flag."""
    from ltr.cli import main

    for flag, value in (("--epochs", "-3"), ("--lr", "-0.5"), ("--patience", "-1"), ("--seed", "-2")):
        with pytest.raises(SystemExit) as exit_:
            main(["train", "--data", "synthetic-mq2008", "--fold", "1", "--loss", "learndcg", flag, value])
        assert exit_.value.code == 2
        assert f"argument {flag}: expected" in capsys.readouterr().err


# ---- the pages ------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", list(ISSUE_CASES))
def test_the_issues_out_of_range_forms_are_refused(cache, case):
    """Training with epochs -3 and learning rate -0.5; Failure overlap with queries -5 and pairs -2."""
    page, texts, numbers, start, expected = ISSUE_CASES[case]
    at = _page(page)
    for label, value in texts.items():
        next(t for t in at.text_input if t.label == label).set_value(value)
    for label, value in numbers.items():
        _number(at, label).set_value(value)
    next(b for b in at.button if b.label == start).click().run()
    assert not at.exception
    errors = _errors(at)
    for line in expected:
        assert line in errors, errors
    assert jobs.list_jobs(limit=None) == []  # nothing queued
    assert not any("Queued" in s.value for s in at.success)


def test_training_refuses_every_bad_field_by_its_label(cache):
    at = _page("training")
    for label, value in (("Batch size (queries)", 0), ("Slate length (0 = whole lists)", -4), ("Seed", -1),
                         ("Patience (0 = never stop early)", -2)):
        _number(at, label).set_value(value)
    next(b for b in at.button if b.label == "Start training").click().run()
    errors = _errors(at)
    for label in ("Batch size (queries)", "Slate length (0 = whole lists)", "Seed", "Patience (0 = never stop early)"):
        assert f"{label}: expected" in errors, (label, errors)
    assert jobs.list_jobs(limit=None) == []


def test_training_concurrency_out_of_range_is_said_and_not_set(cache):
    at = _page("training")
    _number(at, "cpu").set_value(-1).run()
    assert "cpu: expected an integer from 0 to 64, got -1" in _errors(at)
    assert jobs.resource_limits().get("cpu") == 0  # the environment's 0, untouched


@pytest.mark.parametrize("page, label, start", [
    ("failure-typology", "Max queries (0 = all)", {"label": "Start"}),
    ("difficulty-aware-generation", "Queries (0 = all)", {"key": "prefer_start"}),
    ("difficulty-aware-generation", "Judged queries (0 = all)", {"key": "aware_judge_start"}),
    ("difficulty-aware-generation", "H2R queries (0 = all)", {"key": "aware_retrieve_start"}),
])
def test_a_negative_query_count_is_refused(cache, page, label, start):
    at = _page(page)
    _number(at, label).set_value(-7)
    (at.button(key=start["key"]) if "key" in start else next(b for b in at.button if b.label == start["label"])) \
        .click().run()
    assert not at.exception
    assert f"{label}: expected an integer >= 0 (0 = no limit), got -7" in _errors(at)
    assert jobs.list_jobs(limit=None) == []


def test_zero_still_means_all_queries(cache):
    """The fields' "0 = all" keeps working: no --max-queries on the command."""
    from pipeline.views import failure_typology

    failure_typology.submit_typology("dl19", "h2r", max_queries=0)
    (job,) = jobs.list_jobs()
    assert "--max-queries" not in job.command
