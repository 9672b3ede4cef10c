"""The failure paper's claims file and the finding type (:mod:`core.findings`, shared with ``ltr.findings``).

The paper's figures are data: ``paper_claims.json`` (claim text, the paper's figure, how it is read).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from core.findings import FAILS, HOLDS, UNMEASURABLE, VERDICTS, Finding, Part, combine, from_claim, percent  # noqa: F401

CLAIMS_FILE = Path(__file__).with_name("paper_claims.json")


@lru_cache(maxsize=1)
def paper_claims() -> dict:
    """The claims file (``paper_claims.json``): claim text, the paper's figure, and how it is read."""
    return json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))["claims"]


def finding(name: str, parts: list[Part], **kwargs) -> Finding:
    """A :class:`Finding` of the failure paper's claim ``name`` over ``parts``."""
    return from_claim(name, paper_claims()[name], parts, **kwargs)


def pair_name(key: str | None) -> str:
    """``h2r&h2j`` -> ``H2R ∩ H2J``."""
    return " ∩ ".join(t.upper() for t in (key or "").split("&")) if key else "none"
