"""A study's components: how one is named (``NAME[=FILE]``, :func:`parse_component`), and the keys of a
study's generators and judges: one per full identity, never one per name.

On the command line, in the page's form and in a study's configuration a component (retriever,
generator, judge) is ``NAME`` or ``NAME=FILE`` (an imported run, answers or judgments file);
:func:`parse_component` is the one parser of that grammar, here with the study that composes them.

A generator or judge is named ``backend:model`` (or its import name), but the name alone does not say
which model answered: the same model from two hosts, or a tag re-pulled with new weights, has the same
name and a different identity (:meth:`pipeline.llm.base.Provenance.identity`: backend, model, endpoint,
digest; for imported answers or judgments also the file they came from). Keyed by name, the second
silently replaced the first in the study. :func:`component_keys` keeps the plain name where it is
unambiguous (so studies and configuration labels read as before) and, where two identities share a
name, adds what tells them apart: ``@endpoint``, ``[digest12]``, then ``<file>``. Two arguments that
resolve to the same identity (e.g. ``ollama:m`` and ``ollama:m@127.0.0.1:11434``) are one component.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, NamedTuple, Sequence

from core.digest import content_digest
from pipeline.llm.base import Provenance


class ComponentArg(NamedTuple):
    """One component as named: ``name``, and ``file`` when it is imported (``NAME=FILE``)."""
    name: str
    file: Path | None


def parse_component(text: str, option: str) -> ComponentArg:
    """``NAME`` or ``NAME=FILE`` (``option``, e.g. ``--retriever``, names it in the error)."""
    name, sep, file = text.partition("=")
    name = name.strip()
    if not name or (sep and not file.strip()):
        raise ValueError(f"{option} expects NAME or NAME=FILE, got {text!r}")
    return ComponentArg(name, Path(file.strip()).expanduser() if sep else None)


def identity(provenance: Mapping, source: str = "") -> dict:
    """A component's full identity: its model's (backend, model, endpoint, digest) plus, for imported
    answers or judgments, the ``source`` they were read from."""
    ident = Provenance.from_dict(provenance).identity()
    return {**ident, "source": source if ident["backend"] == "imported" else ""}


def identity_digest(ident: Mapping) -> str:
    """Eight hex digits of the identity (file names that must not collide across identities)."""
    return content_digest(dict(ident), 8)


def component_keys(items: Sequence[tuple[str, Mapping]]) -> list[str]:
    """One key per ``(name, identity)``: the name, or where another identity shares it the name plus the
    fields in which they differ (module docstring). Equal identities get equal keys."""
    by_name: dict[str, list[dict]] = {}
    for name, ident in items:
        known = by_name.setdefault(name, [])
        if dict(ident) not in known:
            known.append(dict(ident))
    keys = []
    for name, ident in items:
        group = by_name[name]
        if len(group) == 1:
            keys.append(name)
            continue
        differ = {field for field in ("endpoint", "digest", "source") if len({g[field] for g in group}) > 1}
        key = name if differ else f"{name} ({ident['backend']})"  # e.g. a file named like an LLM
        if "endpoint" in differ:
            key += f"@{ident['endpoint'] or 'local'}"
        if "digest" in differ:
            key += f" [{ident['digest'][:12] or 'no digest'}]"
        if "source" in differ:
            key += f" <{ident['source'].removeprefix('imported from ')}>"
        keys.append(key)
    return keys
