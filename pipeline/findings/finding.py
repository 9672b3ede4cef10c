"""The failure paper's claims file and the finding type (:mod:`core.findings`, shared with ``ltr.findings``).

The paper's figures are data: ``paper_claims.json`` (claim text, the paper's figure, how it is read, and
the claim's ``rule``: type, statistic, threshold and side or margin, level, combine, family, minimum n and
what it counts, shown with the verdict; :func:`claim_rule` reads it as the inference core's
:class:`core.inference.claims.Claim`).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from core.findings import (FAILS, HOLDS, INCONCLUSIVE, UNMEASURABLE, VERDICTS, Finding, Part, combine,  # noqa: F401
                           from_claim, percent)
from core.inference.claims import Claim
from pipeline.sets.overlap import intersection_label

CLAIMS_FILE = Path(__file__).with_name("paper_claims.json")


@lru_cache(maxsize=1)
def paper_claims() -> dict:
    """The claims file (``paper_claims.json``): claim text, the paper's figure, and how it is read."""
    return json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))["claims"]


def claim_rule(name: str) -> Claim:
    """The rule of the failure paper's claim ``name`` as the inference core reads it."""
    return Claim.from_rule(name, paper_claims()[name]["rule"])


def finding(name: str, parts: list[Part], **kwargs) -> Finding:
    """A :class:`Finding` of the failure paper's claim ``name`` over ``parts``."""
    return from_claim(name, paper_claims()[name], parts, **kwargs)


def pair_name(key: str | None) -> str:
    """``h2r&h2j`` -> ``H2R ∩ H2J (incl. H2G)``: a pair's whole intersection, in the one vocabulary of regions
    and intersections (:func:`pipeline.sets.overlap.intersection_label`)."""
    return intersection_label(key)
