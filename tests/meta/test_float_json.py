"""The comparison of a fresh record with a fixture written on another machine (tests.support.float_json):
the last-bit differences of a float32 encoder pass, anything a table could show does not."""
from __future__ import annotations

from tests.support.float_json import json_differences


def test_float32_rounding_between_machines_is_equal_and_a_real_change_is_not():
    stored = {"per_query": {"q5": 0.9999999403953552, "q6": 0.421372652053833}, "n": 7, "hard": ["q6"]}
    here = {"per_query": {"q5": 1.0, "q6": 0.42137268}, "n": 7, "hard": ["q6"]}  # issue 33: read on another machine
    assert json_differences(here, stored) == []
    changed = {"per_query": {"q5": 1.0, "q6": 0.4215}, "n": 7, "hard": ["q6"]}
    assert json_differences(changed, stored) == ["$.per_query.q6: 0.4215 != 0.421372652053833 (tolerance 1e-05)"]
    assert json_differences({**here, "n": 7.0}, stored) == []  # a number is a number
    assert json_differences({**here, "n": 8}, stored) == ["$.n: 8 != 7"]
    assert json_differences({**here, "hard": ["q6", "q8"]}, stored) == ["$.hard: 2 items != 1"]
    assert json_differences({**here, "extra": 1}, stored) == ["$: keys ['extra'] in one only"]
    assert json_differences({**here, "n": True}, {**stored, "n": 1}) == ["$.n: True != 1"]
