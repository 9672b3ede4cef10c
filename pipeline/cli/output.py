"""The line under a result that names the model an ``auto`` spec resolved to, and a model's size with where it
comes from (``--json`` documents are printed by :func:`core.cli.print_json`)."""
from __future__ import annotations


def resolution_lines(role: str, provenance: dict):
    """The resolved model of a non-explicit spec (``auto``) and why it fell back, under a result."""
    if provenance.get("resolution"):
        yield f"  {role}: {provenance['resolution']}"


def print_resolution(role: str, provenance: dict) -> None:
    for line in resolution_lines(role, provenance):
        print(line)


def model_line(provenance: dict) -> str:
    """``imported:text-davinci-003, 175B (models.tsv)``; with the reason when its output carries no verdict
    (``imported:gpt-4o-mini, unknown size: a model of unknown size (state it to count its output)``)."""
    from pipeline.llm.base import Provenance

    model = Provenance.from_dict(provenance)
    gate = model.evidence_gate
    return f"{provenance.get('label') or model.label}, {model.size_text}" + (f": {gate}" if gate else "")
