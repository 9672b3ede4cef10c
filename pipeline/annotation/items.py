"""What an annotator judges: an :class:`Item` (one hard query's LLM-assigned reasons, as the
annotator sees them), the answers a decision row can record, and :class:`AnnotationError`."""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.typology.categories import UNKNOWN_CATEGORY

LLM_ANSWERS = ("readable", "unreadable", "unknown", UNKNOWN_CATEGORY)
UNREADABLE_STATUSES = ("unparseable", "failed")  # an assignment's status when its answer could not be read


class AnnotationError(ValueError):
    """Bad annotation input (a CSV file names its line); nothing was stored."""


@dataclass(frozen=True)
class Item:
    dataset: str
    task: str
    qid: str
    run_id: str
    model: str
    query: str
    context: str
    categories: list  # [{"name", "description"}]
    assigned: list  # [{"category", "justification"}]
    status: str = "ok"  # the assignment's status: "ok", "unparseable" / "failed" (unreadable), "unknown",
    # or "unknown_category" (the answer named categories outside the typology: ``unknown``)
    raw: str = ""  # the model's assignment answer as given
    generator: str = ""  # H2G: the model whose answers the reasons explain
    unknown: tuple = ()  # the names outside the typology the model's answer gave

    @property
    def key(self) -> tuple[str, str, str]:
        """Where the item sits in a queue (and in the page's URL)."""
        return self.dataset, self.task, self.qid

    @property
    def decision_key(self) -> tuple[str, str, str, str]:
        """What an answer judges: this query's assignment in this typology run."""
        return self.run_id, self.dataset, self.task, self.qid

    @property
    def assigned_names(self) -> list[str]:
        return [a["category"] for a in self.assigned]

    @property
    def unreadable(self) -> bool:
        return self.status in UNREADABLE_STATUSES

    @property
    def llm_answer(self) -> str:
        """The decisions' ``llm_answer``: readable, unreadable, unknown (a migrated item with no
        assigned reason, whose status was not recorded) or unknown_category (the answer named
        categories outside the typology: its "not assigned" is no true negative)."""
        if self.unreadable:
            return "unreadable"
        return self.status if self.status in ("unknown", UNKNOWN_CATEGORY) else "readable"


def check_name(annotator: str) -> str:
    name = " ".join(str(annotator).split())
    if not name:
        raise AnnotationError("the annotator name is empty")
    if len(name) > 80 or "," in name:
        raise AnnotationError("an annotator name has at most 80 characters and no comma")
    return name
