"""The line under a result that names the model an ``auto`` spec resolved to (``--json`` documents
are printed by :func:`core.cli.print_json`)."""
from __future__ import annotations


def resolution_lines(role: str, provenance: dict):
    """The resolved model of a non-explicit spec (``auto``) and why it fell back, under a result."""
    if provenance.get("resolution"):
        yield f"  {role}: {provenance['resolution']}"


def print_resolution(role: str, provenance: dict) -> None:
    for line in resolution_lines(role, provenance):
        print(line)
