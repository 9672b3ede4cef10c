"""Annotation items the annotation tests build samples from."""
from __future__ import annotations

from pipeline.annotation.items import Item

CATS = [{"name": "Numbers", "description": "n"}, {"name": "Ambiguity", "description": "a"},
        {"name": "Jargon", "description": "j"}]


def item(qid, task="h2r", dataset="dl19", assigned=("Numbers",)):
    """One item to annotate: query ``qid`` of ``task`` with ``assigned`` (each with its justification)."""
    return Item(dataset, task, qid, run_id=f"run-{task}", model="scripted:scripted", query=f"query {qid}",
                context="<b>passage</b>", categories=CATS,
                assigned=[{"category": c, "justification": f"why {c}"} for c in assigned])
