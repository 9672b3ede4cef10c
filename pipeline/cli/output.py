"""How every subcommand prints: ``--json`` documents and the line under a result that names the
model an ``auto`` spec resolved to."""
from __future__ import annotations

import json
import sys


def dump(obj) -> None:
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


def resolution_lines(role: str, provenance: dict):
    """The resolved model of a non-explicit spec (``auto``) and why it fell back, under a result."""
    if provenance.get("resolution"):
        yield f"  {role}: {provenance['resolution']}"


def print_resolution(role: str, provenance: dict) -> None:
    for line in resolution_lines(role, provenance):
        print(line)
