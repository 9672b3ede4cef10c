"""``core.digest``: the canonical form that every stored id and cache key is the sha256 of. Each test
pins a part of the form against the JSON text written out by hand, so a change to a separator, the key
order, an escape or the encoding fails here (and the callers' ``test_stable_ids.py`` fail too: the ids
they pin were computed by the code before this module existed and must never change)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from core.digest import canonical_json, content_digest


def _sha(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def test_keys_are_sorted_at_every_depth_with_the_default_separators():
    value = {"b": {"y": 1, "x": [3, {"d": 0, "c": None}]}, "a": True}
    assert canonical_json(value) == '{"a": true, "b": {"x": [3, {"c": null, "d": 0}], "y": 1}}'
    assert content_digest(value) == _sha(b'{"a": true, "b": {"x": [3, {"c": null, "d": 0}], "y": 1}}')
    assert content_digest({"a": True, "b": {"y": 1, "x": [3, {"c": None, "d": 0}]}}) == content_digest(value)


def test_non_ascii_text_is_escaped_unless_asked_to_keep_its_utf8_bytes():
    value = {"q": "café «雨»"}
    assert content_digest(value) == _sha(b'{"q": "caf\\u00e9 \\u00ab\\u96e8\\u00bb"}')
    assert content_digest(value, ensure_ascii=False) == _sha('{"q": "café «雨»"}'.encode("utf-8"))
    assert content_digest(value) != content_digest(value, ensure_ascii=False)


def test_tuples_are_lists_floats_their_repr_and_lists_keep_their_order():
    assert canonical_json([(1, 2), 0.001, 1.0, 1e-7, 2.5e20]) == "[[1, 2], 0.001, 1.0, 1e-07, 2.5e+20]"
    assert content_digest((1, 2)) == content_digest([1, 2]) != content_digest([2, 1])


def test_a_value_json_cannot_write_is_refused_unless_a_default_writes_it():
    with pytest.raises(TypeError, match="PosixPath|Path"):
        content_digest({"data": Path("/data/x")})
    assert content_digest({"data": Path("/data/x")}, default=str) == _sha(b'{"data": "/data/x"}')


def test_length_cuts_the_hex_digest_and_must_fit_it():
    full = content_digest({"a": 1})
    assert full == "f9d86028c6e0d64e225186f96acb69338b2c59764df79162107f5c4bb34d1310" and len(full) == 64
    assert content_digest({"a": 1}, 12) == full[:12]
    for bad in (0, 65, -1):
        with pytest.raises(ValueError, match="1 to 64 hex digits"):
            content_digest({"a": 1}, bad)
