"""The failure pages' number and LLM-spec fields: the label each page shows (an error names it) and the rule it is
checked with, the one its command checks the flag with (:mod:`core.fields`; an LLM spec:
:func:`pipeline.llm.specs.check_spec`, as the commands check ``--generator``). The submit functions of
``overlap``, ``typology`` and ``preference`` check them (:func:`query_limit`, :func:`check_fields`)
before anything is queued; the pages' number inputs carry no bounds (see :mod:`core.fields` for why)."""
from __future__ import annotations

from dataclasses import dataclass

from core.fields import POSITIVE_INT, ZERO_OR_POSITIVE_INT, Field, FormError, check_fields


@dataclass(frozen=True)
class SpecField:
    """A form's LLM-spec field: its label and whether it may stay empty (no such model); checked with
    :func:`check_fields` like a number field. A spec is checked by building its backend (no server is
    asked, no model loaded), so a malformed one (``nonsense:::model``) is refused before a job is queued."""

    label: str
    optional: bool = False

    def problem(self, value) -> str | None:
        from pipeline.llm.specs import check_spec

        text = str(value or "").strip()
        if not text and self.optional:
            return None
        try:
            check_spec(text)
        except ValueError as exc:
            return f"{self.label}: {exc}"
        return None

# Failure overlap (python -m pipeline run --cap / --max-queries)
PAIRS_PER_QUERY = Field("Pairs per query (LLM judge)", POSITIVE_INT)
STUDY_QUERIES = Field("Queries (0 = all)", ZERO_OR_POSITIVE_INT)
STUDY_GENERATOR = SpecField("LLM generator (LLM spec, empty for none)", optional=True)
STUDY_LLM_JUDGE = SpecField("LLM judge (LLM spec, empty for none)", optional=True)
# Failure typology (python -m pipeline typology --max-queries / --max-rounds)
TYPOLOGY_QUERIES = Field("Max queries (0 = all)", ZERO_OR_POSITIVE_INT)
TYPOLOGY_ROUNDS = Field("Max rounds", POSITIVE_INT)
# Difficulty-aware generation (python -m pipeline prefer --max-queries)
PREFERENCE_QUERIES = Field("Queries (0 = all)", ZERO_OR_POSITIVE_INT)

__all__ = ["FormError", "PAIRS_PER_QUERY", "PREFERENCE_QUERIES", "STUDY_GENERATOR", "STUDY_LLM_JUDGE",
           "STUDY_QUERIES", "SpecField", "TYPOLOGY_QUERIES", "TYPOLOGY_ROUNDS", "check_fields", "query_limit"]


def query_limit(value: int | None) -> int | None:
    """An already checked "N (0 = all)" value as the commands' ``--max-queries``: None (all) for 0."""
    return int(value) if value else None
