"""Number rules shared by the command lines and the dashboard's forms, so a flag and the form field
that stands for it accept the same values and say the same thing about a bad one.

A rule (:class:`NumberRule`) checks a value (``problem``) or parses a flag's text (``argparse_type``:
``--epochs -3`` -> "argument --epochs: expected an integer >= 1, got -3"). A form names each field
by the label it shows (:class:`Field`); :func:`check_fields` checks a whole form at once and raises
one :class:`FormError` naming every bad field, before anything is queued:
"Epochs: expected an integer >= 1, got -3; Learning rate: expected a number > 0, got -0.5".

Why the forms check here and not in the widget: Streamlit's number input refuses a value outside
its ``min_value``/``max_value`` in the browser and keeps the previous one (its default), so a form
started with epochs -3 ran 20 epochs without a word. The pages' number inputs therefore carry no
bounds; the views' submit functions check the values with these rules.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class NumberRule:
    """An int or float within optional bounds (``low_open``/``high_open``: the bound itself is out)."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    what: str = ""

    @property
    def expected(self) -> str:
        return self.what or self.kind.__name__

    def problem(self, value) -> str | None:
        """None when ``value`` obeys the rule, else what is wrong ("expected an integer >= 1, got -3")."""
        wrong = f"expected {self.expected}, got {value}"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            return wrong
        if self.kind is int and not float(value).is_integer():
            return wrong
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return wrong
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            return wrong
        return None

    def parse(self, text: str):
        """A flag's text as this rule's number; ValueError with the problem otherwise."""
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(f"expected {self.expected}, got {text!r}") from None
        problem = self.problem(value)
        if problem:
            raise ValueError(f"expected {self.expected}, got {text}")
        return value

    def argparse_type(self):
        """This rule as an argparse ``type=`` (argparse prefixes the option's name to the message)."""
        def parse(text: str):
            try:
                return self.parse(text)
            except ValueError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
        parse.__name__ = self.expected  # argparse names the type in its own messages
        return parse


POSITIVE_INT = NumberRule(int, 1, what="an integer >= 1")
NONNEGATIVE_INT = NumberRule(int, 0, what="an integer >= 0")
POSITIVE_FLOAT = NumberRule(float, 0, low_open=True, what="a number > 0")
NONNEGATIVE_FLOAT = NumberRule(float, 0, what="a number >= 0")
QUANTILE = NumberRule(float, 0, 1, low_open=True, high_open=True, what="a number strictly between 0 and 1")
SEED = NumberRule(int, 0, 2**31 - 1, what="an integer from 0 to 2147483647")
# A form's "N (0 = all)" / "N (0 = whole lists)" field: 0 stands for "no limit", so any N >= 0 is valid.
ZERO_OR_POSITIVE_INT = NumberRule(int, 0, what="an integer >= 0 (0 = no limit)")


@dataclass(frozen=True)
class Field:
    """A form's number field: the label the page shows (the error names it) and its rule."""

    label: str
    rule: NumberRule

    def problem(self, value) -> str | None:
        problem = self.rule.problem(value)
        return f"{self.label}: {problem}" if problem else None


class FormError(ValueError):
    """A form with invalid values: ``problems`` holds one "Label: what is wrong" line per bad field."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("Nothing was started. " + "; ".join(self.problems) + ".")


def check_fields(*checks: tuple[Field, object]) -> None:
    """Check each ``(field, value)``; raise one :class:`FormError` naming every bad field (nothing is
    started by a form that fails here)."""
    problems = [p for p in (field.problem(value) for field, value in checks) if p]
    if problems:
        raise FormError(problems)
