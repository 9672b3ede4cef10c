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
  study's one rule (:func:`pipeline.sets.rule.hard_set`) at the right end, with the quantile and the
  rule's words in :attr:`TaskResult.quantile` and :attr:`TaskResult.rule`;
- ``measure`` and ``convention``: what a value is and how it was measured (``CONVENTIONS`` of
  :mod:`pipeline.study.conventions`), and ``provenance``: the run, model (with its digest) or judgments file
  that produced the values, as the study stores it; ``model``: the LLM's provenance record when one did.

A task also reads its values back from a stored study (:meth:`FailureTask.read_study`), through the
same conversion (:meth:`FailureTask.values_of`) of each system's record as a live run, so a study stored by any earlier
version yields the same values and sets. The study (:func:`pipeline.study.run.run_study`) composes
the tasks of :data:`pipeline.study.run.STUDY_TASKS` without knowing any of them: it stores each
system's ``record`` in the task's ``section`` of the study file, names systems apart by ``identity``
(:mod:`pipeline.study.components`) and crosses the tasks' systems into configurations.

Every task class registers itself by its name (:data:`TASK_REGISTRY`, :func:`registered_task`). The
paper's three have their own ``section`` (``retrievers``, ``generators``, ``judges``: the study file's
keys since the first study). A further task (a predictor, a fourth failure task) declares none: a
configuration names its systems in :attr:`pipeline.study.config.StudyConfig.further_tasks`, and the study
file keeps its :class:`TaskResult` in its generic JSON form (:meth:`TaskResult.to_dict`: per system the
values, exclusions, direction, measure, convention, provenance and hard set) under ``further_tasks``, which
:class:`pipeline.study.result.StudyResult` reads back without knowing the task.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Iterable, Iterator, Mapping, Sequence

from pipeline.sets.rule import HardSet, SetSummary, hard_set
from pipeline.study.conventions import CONVENTIONS
from pipeline.study.values import (DIRECTIONS, EASIER, HARDER, QUANTILE_RULE,  # noqa: F401  (re-exported)
                                   PerQueryValues, TaskResult)

if TYPE_CHECKING:
    from pipeline.study.config import StudyConfig
    from pipeline.study.result import StudyResult


def _silent(message: str) -> None:
    return None


class StudyStepError(RuntimeError):
    """A task's step that produced nothing to go on with (e.g. an LLM judge that labelled no pair):
    the run stops there and stores no result."""


def _no_progress():
    from core.jobs.progress import ProgressWriter

    return ProgressWriter(None)  # a writer without a key writes nothing


@dataclass
class StepContext:
    """How a task reports while it runs (not part of what it computes): a log line per system, the
    job's progress record (``tracker``: a :class:`core.jobs.progress.ProgressWriter`) and whether
    LLM steps draw console progress bars."""
    log: Callable[[str], None] = _silent
    tracker: object = field(default_factory=_no_progress)
    progress: bool = False


TASK_REGISTRY: dict[str, type[FailureTask]] = {}  # task name -> its class, as each class statement registers it


def registered_task(name: str) -> FailureTask:
    """The task registered under ``name`` (its module imported), an instance; an unknown name is an error
    naming the registered ones."""
    if name not in TASK_REGISTRY:
        raise ValueError(f"unknown failure task {name!r}; registered: {', '.join(sorted(TASK_REGISTRY)) or 'none'} "
                         f"(a task registers itself when its module is imported)")
    return TASK_REGISTRY[name]()


class FailureTask(ABC):
    """A failure task: one :meth:`run` from a study configuration to its per-query values.

    A task declares what it is in its class statement (``class RetrievalTask(FailureTask, name="h2r",
    role="retriever", section="retrievers", measure="nDCG@10", higher_is=EASIER)``; ``convention``
    defaults to the study's :data:`pipeline.study.conventions.CONVENTIONS` entry of its name) and
    implements :meth:`records` (each system's record, computed) and :meth:`values_of` (a record's values);
    :meth:`run` and :meth:`read_study` put the two together, for a live run and a stored study alike.
    The other methods are defaults a task overrides only where it differs (H2G has two progress stages
    per system; H2J's records are nested by setup). A class with a ``name`` registers itself
    (:data:`TASK_REGISTRY`); one without a ``section`` is a further task (module docstring): its systems
    are ``config.further_tasks[name]`` and its values are stored generically.
    """
    name: ClassVar[str]  # "h2r": the task's key in every set, figure and convention
    role: ClassVar[str]  # "retriever": what one system is (a configuration's field)
    # "retrievers": the StudyConfig field naming the systems and the study file's key (None: a further task)
    section: ClassVar[str | None] = None
    measure: ClassVar[str]
    higher_is: ClassVar[str]
    convention: ClassVar[str]  # how a value is measured and which end is hard (stored with every study)

    def __init_subclass__(cls, *, name: str | None = None, role: str | None = None, section: str | None = None,
                          measure: str | None = None, higher_is: str | None = None, convention: str | None = None,
                          **kwargs):
        super().__init_subclass__(**kwargs)
        declared = {"name": name, "role": role, "section": section, "measure": measure, "higher_is": higher_is,
                    "convention": convention if convention is not None or name is None else CONVENTIONS.get(name, "")}
        for attribute, value in declared.items():
            if value is not None:
                setattr(cls, attribute, value)
        if higher_is is not None and higher_is not in DIRECTIONS:
            raise ValueError(f"{cls.__name__}: higher_is must be one of {DIRECTIONS}, got {higher_is!r}")
        if name is not None:
            known = TASK_REGISTRY.get(name)
            if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
                raise ValueError(f"{cls.__name__}: the task name {name!r} is taken by "
                                 f"{known.__module__}.{known.__qualname__}")
            TASK_REGISTRY[name] = cls

    def run(self, config: StudyConfig, context: StepContext | None = None) -> TaskResult:
        """Every system of ``config`` that this task runs (:meth:`components`), on ``config.data()``."""
        context = context or StepContext()
        data = config.data()
        judged = list(data.queries())
        return self.result(data.name, config.quantile, [self.values_of(data.name, system, record, judged, setup)
                                                        for system, setup, record in self.records(config, data,
                                                                                                  context)])

    @abstractmethod
    def records(self, config: StudyConfig, data, context: StepContext) -> Iterator[tuple[str, str | None, object]]:
        """``(system, setup, record)`` for each system of ``config`` as it is computed on ``data``
        (``config.data()``): the record is what the study file keeps of it."""

    @abstractmethod
    def values_of(self, dataset: str, system: str, record, judged: Sequence[str],
                  setup: str | None = None) -> PerQueryValues:
        """The values of one system from its record (what :meth:`records` computes and
        :meth:`stored_records` reads back); ``judged``: the dataset's judged queries (for ``excluded``)."""

    @property
    def further(self) -> bool:
        """Whether this is a further task (no section of its own: stored generically)."""
        return self.section is None

    def components(self, config: StudyConfig) -> Sequence[str]:
        """The systems this task runs, as the configuration names them (``NAME[=FILE]``; a further task's:
        ``config.further_tasks``)."""
        return config.further_systems(self.name) if self.further else getattr(config, self.section)

    def stages(self, config: StudyConfig) -> int:
        """How many progress stages :meth:`run` announces (one per system by default)."""
        return len(self.components(config))

    def hard_set(self, values: Mapping[str, float], quantile: float) -> HardSet:
        """The set over every query in ``values``, at the end :attr:`higher_is` says is hard."""
        return hard_set(values, quantile, self.name, top=self.higher_is == HARDER)

    def hard_over_all_queries(self, values: Mapping[str, float],
                              quantile: float) -> tuple[list[str], SetSummary | None]:
        """A system's set over every query it scores and how the rule drew it (``([], None)`` without any
        value): what its stored record keeps beside its values (the study's figures use each
        configuration's sets over its universe)."""
        if not values:
            return [], None
        hard = self.hard_set(values, quantile)
        return list(hard.qids), SetSummary.of(hard)

    def per_query_values(self, dataset: str, system: str, values: dict[str, float], excluded: dict[str, str],
                         provenance: dict, **extra) -> PerQueryValues:
        """:class:`PerQueryValues` of this task (its name, measure, direction and convention)."""
        return PerQueryValues(self.name, dataset, system, self.measure, self.higher_is, values, excluded,
                              self.convention, provenance, **extra)

    def result(self, dataset: str, quantile: float, values: list[PerQueryValues]) -> TaskResult:
        return TaskResult(self.name, self.role, dataset, quantile, self.convention, values)

    def stored_records(self, study: StudyResult) -> Iterable[tuple[str, str | None, object]]:
        """``(system, setup, record)`` of this task's section of a stored study (setups nested for
        tasks that have them, like H2J's ``judges``)."""
        return [(name, None, record) for name, record in getattr(study, self.section).items()]

    def read_study(self, study: StudyResult) -> TaskResult:
        """This task's values as a stored study holds them (any study version the store opens); a further
        task's as stored generically (a study without it: no system)."""
        if self.further:
            return study.further_tasks.get(self.name) or self.result(study.dataset, study.quantile, [])
        judged = list(study.queries)
        return self.result(study.dataset, study.quantile, [
            self.values_of(study.dataset, system, record, judged, setup)
            for system, setup, record in self.stored_records(study)])


def not_scored(judged: Sequence[str], values: Mapping[str, float], reasons: Mapping[str, str],
               default: str) -> dict[str, str]:
    """``{qid: why}`` for the judged queries without a value: the task's own reason, else ``default``."""
    return {q: reasons.get(q, default) for q in judged if q not in values}
