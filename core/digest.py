"""The one content digest of a value: what names a run, a cache entry or a study by what defines it.

:func:`content_digest` is the sha256 of the value's canonical JSON text, as lower-case hex, cut to its
first ``length`` digits. The canonical text is exactly::

    json.dumps(value, sort_keys=True, ensure_ascii=ensure_ascii, default=default).encode("utf-8")

that is: keys of every object sorted (at every depth), Python's default separators ``", "`` and
``": "`` (not the compact ones), no indentation, tuples written as lists, floats by their shortest
``repr`` (``0.001``, ``1.0``; ``NaN``/``Infinity`` as Python writes them), and, with the default
``ensure_ascii=True``, every non-ASCII character as a ``\\uXXXX`` escape (the bytes are then ASCII);
with ``ensure_ascii=False`` it enters as its UTF-8 bytes. A value JSON cannot write raises
:class:`TypeError` unless ``default`` says how to write it (``default=str``: a ``Path`` as its text).
Lists keep their order: a caller whose list is a set sorts it first.

Why the form must never change: these digests are stored. They are run ids in the run store
(``ltr.train.config.RunConfig.run_id``), keys of the LLM response cache
(``pipeline.llm.cache.request_key``), study, prediction, typology and preference result ids, and the
names of cached runs, indexes and surrogates. A different byte anywhere in the form (a separator, an
escape, the key order) gives every stored record a new name: finished runs would train again, cached
answers would be asked again, stored studies would no longer be found. A new variation is a new
keyword whose default keeps today's bytes; ``tests/core/test_digest.py`` pins the form, and each
caller's ``test_stable_ids.py`` pins the ids that callers stored before this module existed.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Callable

HEX_DIGITS = 64  # a sha256 in hex


def canonical_json(value: Any, *, ensure_ascii: bool = True, default: Callable[[Any], Any] | None = None) -> str:
    """The canonical JSON text of ``value`` that :func:`content_digest` hashes (see the module docstring)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=ensure_ascii, default=default)


def content_digest(value: Any, length: int = HEX_DIGITS, *, ensure_ascii: bool = True,
                   default: Callable[[Any], Any] | None = None) -> str:
    """The first ``length`` hex digits of the sha256 of ``value``'s canonical JSON (UTF-8).

    ``ensure_ascii``: False keeps non-ASCII text as its UTF-8 bytes (the LLM response cache's form)
    instead of ``\\uXXXX`` escapes. ``default``: how to write what JSON cannot (``str`` for paths)."""
    if not 1 <= length <= HEX_DIGITS:
        raise ValueError(f"a digest has 1 to {HEX_DIGITS} hex digits, got length={length}")
    text = canonical_json(value, ensure_ascii=ensure_ascii, default=default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]
