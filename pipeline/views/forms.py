"""The failure pages' number fields: the label each page shows (an error names it) and the rule it is
checked with, the one its command checks the flag with (:mod:`core.fields`). The submit functions of
``overlap``, ``typology`` and ``preference`` check them (:func:`query_limit`, :func:`check_fields`)
before anything is queued; the pages' number inputs carry no bounds (see :mod:`core.fields` for why)."""
from __future__ import annotations

from core.fields import POSITIVE_INT, ZERO_OR_POSITIVE_INT, Field, FormError, check_fields

# Failure overlap (python -m pipeline run --cap / --max-queries)
PAIRS_PER_QUERY = Field("Pairs per query (LLM judge)", POSITIVE_INT)
STUDY_QUERIES = Field("Queries (0 = all)", ZERO_OR_POSITIVE_INT)
# Failure typology (python -m pipeline typology --max-queries / --max-rounds)
TYPOLOGY_QUERIES = Field("Max queries (0 = all)", ZERO_OR_POSITIVE_INT)
TYPOLOGY_ROUNDS = Field("Max rounds", POSITIVE_INT)
# Difficulty-aware generation (python -m pipeline prefer --max-queries)
PREFERENCE_QUERIES = Field("Queries (0 = all)", ZERO_OR_POSITIVE_INT)

__all__ = ["FormError", "PAIRS_PER_QUERY", "PREFERENCE_QUERIES", "STUDY_QUERIES", "TYPOLOGY_QUERIES",
           "TYPOLOGY_ROUNDS", "check_fields", "query_limit"]


def query_limit(value: int | None) -> int | None:
    """An already checked "N (0 = all)" value as the commands' ``--max-queries``: None (all) for 0."""
    return int(value) if value else None
