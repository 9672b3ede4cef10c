"""One interface for the study's failure tasks: what H2R, H2G and H2J (and any later task, or a
predictor evaluated against them) produce, and the one method that produces it.

A task is a stage with one method, :meth:`FailureTask.run` (PyTerrier's one-``transform`` stages are
the model): given a :class:`pipeline.study.config.StudyConfig` it returns a :class:`TaskResult`, one
:class:`PerQueryValues` per system it ran (a retriever, a generator, a judge in one setup). Each
carries everything a reader of the values needs and nothing of how the task is computed:

- ``values``: ``{qid: float}`` over the queries the task scores, and ``excluded``: ``{qid: why}`` for
  the judged queries it did not score;
- ``higher_is``: :data:`EASIER` (nDCG@10, BERTScore F1: the hard set is the bottom quantile) or
  :data:`HARDER` (disagreement: the top quantile); :meth:`PerQueryValues.hard_set` applies the
  study's one rule (:func:`pipeline.sets.rule.hard_set`) at the right end;
- ``measure`` and ``convention``: what a value is and how it was measured (``CONVENTIONS`` of
  :mod:`pipeline.study.conventions`), and ``provenance``: the run, model (with its digest) or judgments file
  that produced the values, as the study stores it; ``model``: the LLM's provenance record when one did.

A task also reads its values back from a stored study (:meth:`FailureTask.read_study`), through the
same conversion (:meth:`FailureTask.values_of`) as a live run, so a study stored by any earlier
version yields the same values and sets. The study (:func:`pipeline.study.run.run_study`) composes
the tasks of :data:`pipeline.study.tasks.STUDY_TASKS` without knowing any of them: it stores each
system's ``record`` in the task's ``section`` of the study file, names systems apart by ``identity``
(:mod:`pipeline.study.components`) and crosses the tasks' systems into configurations.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Iterable, Iterator, Mapping, Sequence

from pipeline.sets.rule import HardSet, hard_set

if TYPE_CHECKING:
    from pipeline.study.config import StudyConfig
    from pipeline.study.result import StudyResult

EASIER = "easier"  # a higher value means an easier query: the hard set is the bottom quantile
HARDER = "harder"  # a higher value means a harder query: the hard set is the top quantile
DIRECTIONS = (EASIER, HARDER)


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
        scope = self.values if within is None else {q: v for q, v in self.values.items() if q in set(within)}
        return hard_set(scope, quantile, self.task, top=self.hard_is_top)


@dataclass
class TaskResult:
    """One task on one dataset: per system its values, in the order the configuration named them."""
    task: str
    role: str  # what one system of the task is: "retriever", "generator", "judge"
    dataset: str
    quantile: float  # the study's hard-set quantile (the bottom or top q, by each value's direction)
    convention: str
    values: list[PerQueryValues] = field(default_factory=list)

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


def _silent(message: str) -> None:
    return None


class _NoProgress:
    """The progress tracker of a run no page watches (a :class:`core.jobs.progress.ProgressWriter`
    without a key writes nothing either; this one is needed before any is built)."""

    def stage(self, name: str, total: int = 0, unit: str = "item") -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def set_total(self, total: int) -> None:
        return None


@dataclass
class StepContext:
    """How a task reports while it runs (not part of what it computes): a log line per system, the
    job's progress record (``tracker``: a :class:`core.jobs.progress.ProgressWriter`) and whether
    LLM steps draw console progress bars."""
    log: Callable[[str], None] = _silent
    tracker: object = field(default_factory=_NoProgress)
    progress: bool = False


class FailureTask(ABC):
    """A failure task: one :meth:`run` from a study configuration to its per-query values.

    Subclasses set the class attributes and implement :meth:`run` and :meth:`values_of`; the rest are
    defaults a task overrides only when it differs (e.g. H2G has two progress stages per system).
    """
    name: ClassVar[str]  # "h2r": the task's key in every set, figure and convention
    role: ClassVar[str]  # "retriever": what one system is (a configuration's field)
    section: ClassVar[str]  # "retrievers": the StudyConfig field naming the systems and the study file's key
    measure: ClassVar[str]
    higher_is: ClassVar[str]
    convention: ClassVar[str]  # how a value is measured and which end is hard (stored with every study)

    @abstractmethod
    def run(self, config: StudyConfig, context: StepContext | None = None) -> TaskResult:
        """Every system of ``config`` that this task runs (:meth:`components`), on ``config.data()``."""

    @abstractmethod
    def values_of(self, dataset: str, system: str, record, judged: Sequence[str],
                  setup: str | None = None) -> PerQueryValues:
        """The values of one system from its stored form ``record`` (what :meth:`run` stores and
        :meth:`read_study` reads); ``judged``: the dataset's judged queries (for ``excluded``)."""

    def components(self, config: StudyConfig) -> Sequence[str]:
        """The systems this task runs, as the configuration names them (``NAME[=FILE]``)."""
        return getattr(config, self.section)

    def stages(self, config: StudyConfig) -> int:
        """How many progress stages :meth:`run` announces (one per system by default)."""
        return len(self.components(config))

    def hard_set(self, values: Mapping[str, float], quantile: float) -> HardSet:
        """The set over every query in ``values``, at the end :attr:`higher_is` says is hard."""
        return hard_set(values, quantile, self.name, top=self.higher_is == HARDER)

    def result(self, dataset: str, quantile: float, values: list[PerQueryValues]) -> TaskResult:
        return TaskResult(self.name, self.role, dataset, quantile, self.convention, values)

    def stored_records(self, study: StudyResult) -> list[tuple[str, str | None, object]]:
        """``(system, setup, record)`` of this task's section of a stored study (setups nested for
        tasks that have them, like H2J's ``judges``)."""
        return [(name, None, record) for name, record in getattr(study, self.section).items()]

    def read_study(self, study: StudyResult) -> TaskResult:
        """This task's values as a stored study holds them (any study version the store opens)."""
        judged = list(study.queries)
        return self.result(study.dataset, study.quantile, [
            self.values_of(study.dataset, system, record, judged, setup)
            for system, setup, record in self.stored_records(study)])


def not_scored(judged: Sequence[str], values: Mapping[str, float], reasons: Mapping[str, str],
               default: str) -> dict[str, str]:
    """``{qid: why}`` for the judged queries without a value: the task's own reason, else ``default``."""
    return {q: reasons.get(q, default) for q in judged if q not in values}
