"""A model's size in billions of parameters: read from what reports it, or stated by the user.

Each backend reads its model's size from what measured it (:attr:`pipeline.llm.base.Provenance.parameters_b`
with its ``size_source``): Ollama's ``/api/show`` (``details.parameter_size``, e.g. ``"494.03M"``), the
embedded GGUF's tensor count (checked against the file's header), llama.cpp's server in the
OpenAI-compatible model list (``meta.n_params``). Nothing else reports one (other OpenAI-compatible
servers, imported answers and judgments): the size is then unknown, and an unknown size is never
taken for a large one (:attr:`Provenance.evidence_gate`) unless the user states it
(``--model-size MODEL=SIZE``, :func:`stated_size`), which is recorded as ``stated by the user``.

A statement fills an unknown size only: where a backend reports the size, the reported figure stays,
and a statement that contradicts it (more than :data:`STATED_TOLERANCE` apart: "3B" for a reported
3.2B agrees, "8B" for a reported 0.49B does not) is refused rather than silently ignored or believed.

A statement is also checked against what the tool knows: the published sizes of well-known models, each with
its source (:data:`PUBLISHED_FILE`, ``published_sizes.tsv``: FLAN-T5-large 0.78B from Chung et al. 2022,
Llama-3.3-70B 70B from its model card, the Qwen2.5 sizes, ...; OpenAI's models: unknown, not published).
:func:`check_stated_size` refuses a statement that contradicts a published size, naming both and the source
(``--model-size flan-t5-large=70B`` exits 2 naming 0.78B); it is the one check every stated size goes through
(the ``--model-size`` flag, :func:`with_stated_size`, a data folder's ``models.tsv``). A model whose size is
not published cannot be contradicted: its statement stands, recorded as stated.
"""
from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from pipeline.llm.base import SMALL_MODEL, Provenance

SOURCE_OLLAMA = "ollama /api/show"
SOURCE_GGUF = "GGUF metadata"
SOURCE_OPENAI = "OpenAI-compatible /v1/models"
SOURCE_STATED = "stated by the user"
STATED_FLAG = "--model-size"
# how far a statement may lie from a reported size and still agree with it: statements are rounded
# ("3B" for llama3.2's reported 3.2B is 6% off), a contradiction (0.5B against 8B) is far beyond
STATED_TOLERANCE = 0.10

# "494.03M", "8.0B", "1.5b", "135M", "70B", "1.2T", "900K": a positive number and a unit (Ollama's
# format.HumanNumber writes K, M, B; T is accepted for completeness)
_UNITS = {"k": 1e-6, "m": 1e-3, "b": 1.0, "t": 1e3}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kmbt])\s*$", re.IGNORECASE)
PUBLISHED_FILE = Path(__file__).resolve().parent / "published_sizes.tsv"
UNKNOWN = "unknown"
# what a model's name may carry besides its identity: a backend, a host, an organisation, a tag or variant
_BACKEND = re.compile(r"^(?:ollama|openai|embedded|imported|hf|huggingface):", re.IGNORECASE)
_VARIANT = re.compile(r"[-:](?:instruct|chat|it|hf|latest|gguf|fp16|bf16|q\d\w*)(?:[-:.].*)?$")


def billions(text: str) -> float:
    """``"494.03M"`` -> 0.49403, ``"8.0B"`` -> 8.0; ValueError for anything else (no unit, zero, not a number).
    A unit is required: a bare "8" could mean 8 parameters or 8 billion."""
    match = _SIZE.match(text or "")
    if not match:
        raise ValueError(f"expected a size such as 8B, 1.5B, 494M or 135M (a number and K, M, B or T), got {text!r}")
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"a model size must be above 0, got {text!r}")
    return value


def reported_billions(text) -> float | None:
    """A size a server reports (Ollama's ``parameter_size``) in billions; None when it reports none or
    one that cannot be read (then the size is unknown, never guessed)."""
    try:
        return billions(str(text)) if text else None
    except ValueError:
        return None


def count_billions(count) -> float | None:
    """A parameter count (llama.cpp's ``n_params``, a GGUF's tensor elements) in billions; None unless a positive integer."""
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        return None
    return count / 1e9


def sized(provenance: Provenance, parameters_b: float | None, source: str) -> Provenance:
    """``provenance`` with the size a backend reported (unchanged when it reported none)."""
    if parameters_b is None:
        return provenance
    return replace(provenance, parameters_b=parameters_b, size_source=source)


def stated_size(text: str) -> tuple[str, float]:
    """``MODEL=SIZE`` (the flag's value) -> ``(MODEL, billions)``; ValueError naming what is wrong.
    MODEL is the model as results name it (``qwen3:8b`` or ``ollama:qwen3:8b``; an imported
    generator's or judge's NAME); the last ``=`` separates it (model names may hold ``:``)."""
    model, sep, size = (text or "").rpartition("=")
    if not sep or not model.strip():
        raise ValueError(f"expected MODEL=SIZE (e.g. qwen3:8b=8B, llama-3.3-70b=70B), got {text!r}")
    return model.strip(), billions(size)


def statement_for(provenance: Provenance | Mapping, stated: Mapping[str, float] | None) -> float | None:
    """The size stated for this model: under its model name or ``backend:model``; None when none is."""
    if not stated:
        return None
    backend, model = (provenance.backend, provenance.model) if isinstance(provenance, Provenance) else (
        provenance.get("backend", ""), provenance.get("model", ""))
    for name in (f"{backend}:{model}", model):
        if name in stated:
            return float(stated[name])
    return None


def with_stated_size(provenance: Provenance, stated: Mapping[str, float] | None) -> Provenance:
    """``provenance`` with the user's statement of its size (module docstring): it fills an unknown size;
    it agrees with a reported one (that stays); a contradiction of the reported or the published size
    (:func:`check_stated_size`) raises ValueError naming the flag."""
    value = statement_for(provenance, stated)
    if value is None:
        return provenance
    check_stated_size(provenance.model, value, STATED_FLAG)
    if provenance.parameters_b is None:
        return replace(provenance, parameters_b=value, size_source=SOURCE_STATED)
    reported = provenance.parameters_b
    if abs(value - reported) > STATED_TOLERANCE * reported:
        raise ValueError(f"{STATED_FLAG} {provenance.model}={value:g}B contradicts the {provenance.size_text} "
                         f"the model reports; a statement only fills a size nothing reports")
    return provenance


def stated_record(record: Mapping, stated: Mapping[str, float] | None) -> dict:
    """A stored provenance record (``Provenance.as_dict`` or an imported one's plain dict) with the stated
    size applied; the record's own keys stay as they are (an imported record keeps its shape)."""
    updated = with_stated_size(Provenance.from_dict(record), stated)
    out = dict(record)
    if updated.parameters_b is not None:
        out.update(parameters_b=updated.parameters_b, size_source=updated.size_source, small=updated.small)
        if "label" in out and updated.small and not record.get("small"):  # marked as Provenance.label marks it
            out["label"] += f" ({SMALL_MODEL}: not a finding)"
    return out


# ---------------------------------------------------------------------------- published sizes
@dataclass(frozen=True)
class PublishedSize:
    """A well-known model's size as its makers published it (None: not published), and where."""
    name: str
    parameters_b: float | None
    source: str

    @property
    def text(self) -> str:
        figure = UNKNOWN if self.parameters_b is None else f"{self.parameters_b:g}B"
        return f"{self.name}: {figure} ({self.source})"


def model_key(name: str) -> str:
    """A model name as the table matches it: lower case, without backend, host, organisation and variant
    (``ollama:llama3.3:70b-instruct-q4_K_M`` -> ``llama3.3:70b``, ``google/flan-t5-large`` -> ``flan-t5-large``)."""
    key = _BACKEND.sub("", (name or "").strip().lower()).split("@")[0].rsplit("/", 1)[-1]
    return _VARIANT.sub("", key.replace("_", "-").replace(" ", "-"))


@lru_cache(maxsize=None)
def published_sizes(path: str | Path = PUBLISHED_FILE) -> dict[str, PublishedSize]:
    """``{model_key: PublishedSize}`` of the table (``name``, ``aliases`` comma-separated, ``parameters``
    like ``0.78B`` or ``unknown``, ``source``); a malformed row raises ValueError naming the file and line."""
    out: dict[str, PublishedSize] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle, delimiter="\t"), start=2):
            name, source = (row.get("name") or "").strip(), (row.get("source") or "").strip()
            text = (row.get("parameters") or "").strip()
            if not name or not source:
                raise ValueError(f"{path}:{line}: a row needs a name and a source")
            try:
                value = None if text.lower() == UNKNOWN else billions(text)
            except ValueError as exc:
                raise ValueError(f"{path}:{line}: parameters: {exc}") from None
            entry = PublishedSize(name, value, source)
            for alias in [name, *(a for a in (row.get("aliases") or "").split(",") if a.strip())]:
                key = model_key(alias)
                if key in out and out[key] != entry:
                    raise ValueError(f"{path}:{line}: {alias!r} already names {out[key].name}")
                out[key] = entry
    return out


def published_size(name: str) -> PublishedSize | None:
    """The published size of the model ``name`` names (:func:`model_key`), None when the table has no entry."""
    return published_sizes().get(model_key(name))


def check_stated_size(name: str, parameters_b: float, source: str) -> None:
    """Refuse (ValueError) a stated size that contradicts the model's published one (more than
    :data:`STATED_TOLERANCE` apart), naming the statement, its ``source`` (a flag, a file), the published figure
    and where it was published. A model the table does not know, or whose size is not published, passes."""
    known = published_size(name)
    if known is None or known.parameters_b is None:
        return
    if abs(parameters_b - known.parameters_b) > STATED_TOLERANCE * known.parameters_b:
        raise ValueError(f"{source}: {name} = {parameters_b:g}B contradicts the published size of {known.name}, "
                         f"{known.parameters_b:g}B ({known.source})")
