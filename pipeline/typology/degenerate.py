"""Degenerate assignments: a run whose model gave every category to every query, or no category to any.

Such an assignment tells neither queries nor categories apart (measured: the 1.5B model on DL19 gave
all 3 categories to 6 of 6 queries), so its agreement with annotators says nothing about the
typology: with every category assigned, precision is the share of categories that apply to a query
at all; with none assigned, cell accuracy is the share of cells nobody tagged. The Failure typology
page, ``pipeline typology`` and the ``typology_agreement`` finding flag it, and such a run gives no
verdict. Only readable assignments count (status ``ok``): an unreadable answer or one naming
categories outside the typology says nothing about which categories apply.
"""
from __future__ import annotations

from typing import Iterable

READABLE = "ok"  # the status of an assignment whose answer was read (pipeline.typology.assignment)


def degenerate_reason(assigned: Iterable[Iterable[str]], categories: Iterable[str]) -> str:
    """Why the readable assignments ``assigned`` (per query, the category names it got) over a
    typology of ``categories`` are degenerate, "" when they are not (or when there are none)."""
    sets = [set(a) for a in assigned]
    names = set(categories)
    if not sets or not names:
        return ""
    if all(names <= s for s in sets):
        return (f"degenerate assignment: every one of the {len(names)} categories was assigned to every one of the "
                f"{len(sets)} readable queries, so it tells no query or category apart")
    if not any(sets):
        return f"degenerate assignment: no category was assigned to any of the {len(sets)} readable queries"
    return ""


def run_degenerate_reason(queries: list[dict], categories) -> str:
    """:func:`degenerate_reason` of a stored run (:meth:`pipeline.typology.store.TypologyStore.queries`
    and the run's categories)."""
    return degenerate_reason([[a["category"] for a in q["assigned"]] for q in queries if q["status"] == READABLE],
                             [c.name for c in categories])
