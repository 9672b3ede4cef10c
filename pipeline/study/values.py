"""The per-query values of a failure task and their stored form: :class:`PerQueryValues` (one system's
values with their direction, exclusions and provenance) and :class:`TaskResult` (one task's systems), each
with the generic JSON form a further task is stored in (:mod:`pipeline.study.task`'s docstring says what
every field means). Imports nothing of the study but its conventions, so that the study's result types
(:mod:`pipeline.study.result`) and the task interface (:mod:`pipeline.study.task`) both build on it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

from pipeline.sets.rule import HardSet, SetSummary, hard_set
from pipeline.study.conventions import CONVENTIONS

EASIER = "easier"  # a higher value means an easier query: the hard set is the bottom quantile
HARDER = "harder"  # a higher value means a harder query: the hard set is the top quantile
DIRECTIONS = (EASIER, HARDER)
QUANTILE_RULE = CONVENTIONS["quantile"]


@dataclass
class PerQueryValues:
    """One system's per-query values of one task on one dataset (module docstring)."""
    task: str  # "h2r" | "h2g" | "h2j" | a later task's name
    dataset: str
    system: str  # the system's key in the study: a retriever run, a generator or a judge
    measure: str  # what a value is: "nDCG@10", "BERTScore F1", "disagreement"
    higher_is: str  # EASIER or HARDER
    values: dict[str, float]  # qid -> value, over the queries the task scores
    excluded: dict[str, str] = field(default_factory=dict)  # qid -> why the task did not score it
    convention: str = ""  # how the values were measured and which end is hard
    provenance: dict = field(default_factory=dict)  # what produced the values, as the study stores it
    setup: str | None = None  # a second key within one system (H2J: the judging setup)
    model: dict | None = None  # the LLM's provenance record (backend, model, endpoint, digest, small)
    identity: dict | None = None  # full identity where two systems may share a name (pipeline.study.components)
    record: object = field(default=None, repr=False, compare=False)  # the study file's form of this system

    def __post_init__(self):
        if self.higher_is not in DIRECTIONS:
            raise ValueError(f"higher_is must be one of {DIRECTIONS}, got {self.higher_is!r}")

    @property
    def hard_is_top(self) -> bool:
        """Whether the hard set is the top quantile (higher is harder)."""
        return self.higher_is == HARDER

    @property
    def label(self) -> str:
        """``system`` or ``system (setup)``: how a page or a table names these values."""
        return f"{self.system} ({self.setup})" if self.setup else self.system

    def hard_set(self, quantile: float, within: Iterable[str] | None = None) -> HardSet:
        """The task's hard set under the study's one rule (:func:`pipeline.sets.rule.hard_set`), at
        the end ``higher_is`` says is hard; ``within``: only those queries (a common universe)."""
        inside = None if within is None else set(within)
        scope = self.values if inside is None else {q: v for q, v in self.values.items() if q in inside}
        return hard_set(scope, quantile, self.task, top=self.hard_is_top)

    def to_dict(self, quantile: float) -> dict:
        """The generic stored form (a further task's system in the study file), with the hard set over
        every query it scores under ``quantile`` (``hard``, ``hard_set``; ``[]`` and null without a value)."""
        hard = self.hard_set(quantile) if self.values else None
        return {"system": self.system, "setup": self.setup, "measure": self.measure, "higher_is": self.higher_is,
                "convention": self.convention, "values": self.values, "excluded": self.excluded,
                "provenance": self.provenance, "model": self.model, "identity": self.identity,
                "hard": list(hard.qids) if hard else [], "hard_set": SetSummary.of(hard).to_dict() if hard else None}

    @classmethod
    def from_dict(cls, task: str, dataset: str, data: Mapping) -> PerQueryValues:
        """The values of :meth:`to_dict` (``record``: the stored dict itself)."""
        return cls(task, dataset, data["system"], data["measure"], data["higher_is"], dict(data["values"]),
                   dict(data.get("excluded") or {}), data.get("convention", ""), data.get("provenance") or {},
                   data.get("setup"), data.get("model"), data.get("identity"), record=data)


@dataclass
class TaskResult:
    """One task on one dataset: per system its values, in the order the configuration named them."""
    task: str
    role: str  # what one system of the task is: "retriever", "generator", "judge"
    dataset: str
    quantile: float  # the study's hard-set quantile (the bottom or top q, by each value's direction)
    convention: str
    values: list[PerQueryValues] = field(default_factory=list)
    rule: str = QUANTILE_RULE  # how the quantile becomes a set (target size, tie blocks): pipeline.sets.rule

    def __iter__(self) -> Iterator[PerQueryValues]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def get(self, system: str, setup: str | None = None) -> PerQueryValues:
        for v in self.values:
            if v.system == system and v.setup == setup:
                return v
        have = ", ".join(v.label for v in self.values) or "none"
        raise KeyError(f"{self.task}: no values of {system!r}" + (f" ({setup})" if setup else "") + f"; have {have}")

    def hard_sets(self) -> dict[str, HardSet]:
        """Each system's hard set over every query it scores, keyed by :attr:`PerQueryValues.label`."""
        return {v.label: v.hard_set(self.quantile) for v in self.values}

    def to_dict(self) -> dict:
        """The generic stored form of a further task: ``{task, role, quantile, convention, rule, systems:
        {label: PerQueryValues.to_dict}}`` (the dataset is the study's)."""
        return {"task": self.task, "role": self.role, "quantile": self.quantile, "convention": self.convention,
                "rule": self.rule, "systems": {v.label: v.to_dict(self.quantile) for v in self.values}}

    @classmethod
    def from_dict(cls, dataset: str, data: Mapping) -> TaskResult:
        task = data["task"]
        return cls(task, data["role"], dataset, data["quantile"], data.get("convention", ""),
                   [PerQueryValues.from_dict(task, dataset, v) for v in data["systems"].values()],
                   data.get("rule", QUANTILE_RULE))
