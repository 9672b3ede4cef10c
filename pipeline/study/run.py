"""The failure study for one collection: the tasks of :data:`STUDY_TASKS` (retrieval H2R, generation
H2G, judgment H2J: :mod:`pipeline.study.tasks`, each a :class:`pipeline.study.task.FailureTask`) run on one
:class:`pipeline.study.config.StudyConfig`, their hard sets, and every configuration's overlap
(``run_study``; one configuration: ``failure_sets``). The study knows no task's internals: it stores each
system's record in the task's section of the study file, keys systems by identity
(:mod:`pipeline.study.components`) and crosses the three tasks' systems into configurations.

Components are named on the command line as ``NAME[=FILE]`` (each task's module says what its forms mean):

- retriever: ``NAME=RUNFILE`` imports a run; ``NAME`` alone is the data folder's
  ``runs/run.NAME.<dataset>.txt``, else computed here (``pipeline.retrieval.retrievers.get_run``);
- generator: ``NAME=FILE.jsonl`` imports answers; ``NAME`` alone is the data folder's
  ``answers/answers.NAME.<dataset>.jsonl`` when it exists, else an LLM spec
  (``embedded``, ``ollama:llama3.2:3b``, ``openai:MODEL@URL``, ``auto``: ``pipeline.llm.specs``),
  and the result is named by the model the spec resolved to (``backend:model``), never by the spec;
- judge: ``NAME=FILE`` imports qrels-format judgments; ``NAME`` alone is the data folder's
  ``judgments/judgments.NAME.<dataset>.txt`` when it exists, else an LLM spec (named like a generator).

A step whose model cannot be reached raises :class:`pipeline.llm.LLMUnavailable` before it writes
anything; a generation without a single answer raises :class:`pipeline.llm.LLMError`.

Conventions (recorded in every result): per-query nDCG@10 through ir_measures with judged queries
missing from a run scoring 0; BERTScore F1 max over the answer's grade-2/3 passages with text
(queries without one excluded and counted); disagreement over the judge's labelled pairs.

Partial references (H2G): the maximum over a query's reference passages can only be lower when some
of them have no text, so on a partial corpus (DL20: 28 of 54 queries have only some of their grade-2/3
passages' texts; DL21: 47 of 53) H2G membership would partly measure corpus coverage. Every result
records each query's reference coverage (with text / all), and by default (``partial_references=
"exclude"``) queries with an incomplete reference set are left out of H2G and counted;
``"include"`` (CLI ``--partial-references include``) scores them against the passages at hand.

The universe (:mod:`pipeline.study.universe`, CLI ``--universe``): the three sets of a configuration are
intersected over the *common universe*, the queries all three tasks score, so that they can be
intersected and tested against independence. By default (``universe="per-task"``, the paper's) each
task's set is its quantile over the task's own scored queries and the overlap counts its members in the
common universe; ``"common"`` takes each quantile within the common universe (the rule of studies
stored before the choice). The sets within the common universe are the study's sets (every figure
uses them); each component also records its own set over every query it scores
(:mod:`pipeline.study.result` names the two apart). ``run_study`` returns a
:class:`pipeline.study.result.StudyResult`.

Further tasks (:func:`study_tasks`): a registered :class:`pipeline.study.task.FailureTask` without a section
of its own runs when the configuration names its systems (``StudyConfig.further_tasks``). Its values are
stored generically (the study file's ``further_tasks``), its systems are crossed into the configurations
like the three tasks' (each label gains `` | system``), the common universe is then the queries every
task scores, and its set is paired with every other set (the analysis' ``further_pairwise``); the Venn
regions, the all-three and exclusive shares and the largest pair stay those of the paper's three sets.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from itertools import product
from typing import Collection

from pipeline.llm.base import Provenance
from pipeline.sets.rule import SetSummary
from pipeline.sets.overlap import TASKS, further_pairwise, overlap_analysis, stability_table
from pipeline.study.components import component_keys
from pipeline.study.config import StudyConfig
from pipeline.study.conventions import CONVENTIONS
from pipeline.study.result import Components, ConfigurationResult, StudyResult
from pipeline.study.task import (HARDER, TASK_REGISTRY, FailureTask, PerQueryValues, StepContext, TaskResult,
                                 registered_task)
from pipeline.study.tasks.h2g import GenerationTask
from pipeline.study.tasks.h2j import JudgmentTask
from pipeline.study.tasks.h2r import RetrievalTask
from pipeline.study.universe import DEFAULT_UNIVERSE, UniverseSummary, draw_sets

# the study's tasks, in the order they run and their sets are named (pipeline.sets.overlap.TASKS)
STUDY_TASKS: tuple[FailureTask, ...] = (RetrievalTask(), GenerationTask(), JudgmentTask())
TASKS_BY_NAME = {task.name: task for task in STUDY_TASKS}
HARDEST_AT_TOP = frozenset(task.name for task in STUDY_TASKS if task.higher_is == HARDER)  # H2J


def study_tasks(config: StudyConfig) -> tuple[FailureTask, ...]:
    """The tasks a study of ``config`` runs: :data:`STUDY_TASKS`, then each further task it names
    (registered by name: :func:`pipeline.study.task.registered_task`), in the order it names them."""
    further = tuple(registered_task(name) for name, _ in config.further_tasks)
    for task in further:
        if not task.further:
            raise ValueError(f"{task.name} is one of the study's own tasks: name its systems with "
                             f"StudyConfig.{task.section}, not further_tasks")
    return STUDY_TASKS + further


@dataclass
class FailureSets:
    """One configuration's three sets, the values behind them, the universe and the answers."""
    dataset: str
    configuration: dict
    sets: dict[str, list[str]]
    values: dict[str, dict[str, float]]
    universe: list[str]
    answers: dict[str, str]
    analysis: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    set_info: dict = field(default_factory=dict)  # per task: threshold, target, tie block, |set|/N, warning
    universe_info: dict = field(default_factory=dict)  # pipeline.study.universe.UniverseSummary: rule, sizes, warning

    def as_dict(self) -> dict:
        return {"dataset": self.dataset, "configuration": self.configuration, "n_queries": len(self.universe),
                **self.sets, "set_info": self.set_info, "universe_info": self.universe_info,
                "universe": self.universe, "values": self.values,
                "provenance": self.provenance,
                **{k: v for k, v in self.analysis.items() if k not in ("sets",)}}


def combine(dataset: str, configuration: dict, values: dict[str, dict[str, float]], answers: dict[str, str],
            quantile: float, provenance: dict | None = None, *, universe: str = DEFAULT_UNIVERSE,
            n_judged: int = 0, top: Collection[str] = HARDEST_AT_TOP) -> FailureSets:
    """The three sets (and each further task's, after them) under the ``universe`` rule
    (:func:`pipeline.study.universe.draw_sets`) and their overlap analysis over the common universe (the
    paper's three sets', plus ``further_pairwise`` with a further task: module docstring); ``n_judged``: the
    judged queries (for the size warning); ``top``: the tasks whose hardest queries have the highest values."""
    names = [*TASKS, *(t for t in values if t not in TASKS)]
    common, hard, sets, summary = draw_sets({task: values[task] for task in names}, quantile, universe, n_judged,
                                            top=top)
    if len(common) < 4:
        every = "all three" if len(names) == len(TASKS) else f"all {len(names)}"
        raise ValueError(f"{dataset}: only {len(common)} queries are scored by {every} tasks")
    analysis = overlap_analysis({task: sets[task] for task in TASKS}, common)
    if len(names) > len(TASKS):
        analysis["further_pairwise"] = further_pairwise(sets, common)
    return FailureSets(dataset, {**configuration, "quantile": quantile, "universe": universe}, sets,
                       {t: {q: values[t][q] for q in common} for t in values}, common, answers,
                       analysis, provenance or {},
                       {task: SetSummary.of(h).to_dict() for task, h in hard.items()}, summary.to_dict())


def run_study(config, *, log=print, study_id: str | None = None, progress_key: str | None = None,
              progress: bool = True, **settings) -> StudyResult:
    """Every task of :data:`STUDY_TASKS` for every component of ``config`` (a
    :class:`pipeline.study.config.StudyConfig`), then every configuration's overlap; stored as a new
    study (:mod:`pipeline.study.store`, atomically, under ``study_id`` or a new id) and returned, unless a
    stored study holds the same result (same configuration, same inputs: :func:`pipeline.study.store.same_study`),
    which is then returned and nothing is stored. A step that fails stops the run before anything is stored. Resumable: LLM answers come from the
    response cache and BERTScore pairs from their cache, so a rerun repeats no expensive call.

    ``config`` may also be a loaded collection with the configuration's fields as keywords
    (``run_study(data, retrievers=[...], generators=[...], judges=[...], cap=4)``:
    ``StudyConfig.of(data, **settings)``). ``progress_key``: the job's progress record
    (:mod:`core.jobs.progress`): stage n of m and items done of total, read by the page's jobs table."""
    from core.jobs.progress import ProgressWriter
    from pipeline.study import store as studies

    if not isinstance(config, StudyConfig):
        config = StudyConfig.of(config, **settings)
    elif settings:
        raise TypeError(f"run_study(config) takes no configuration keywords, got {sorted(settings)}")
    data = config.data()
    data.require_qrels()
    configuration = config.stored()
    started = time.time()
    asked_id = studies.check_study_id(study_id) if study_id else None
    study_id = asked_id or studies.new_study_id(configuration, started)
    tracker = ProgressWriter(progress_key, sum(task.stages(config) for task in study_tasks(config)) + 1)
    try:
        study = _run_tasks(config, StepContext(log, tracker, progress))
    except BaseException as exc:
        tracker.finish(error=" ".join(str(exc).split()) or type(exc).__name__)
        raise
    study = StudyResult(id=study_id, configuration=configuration, time=studies.iso_time(started),
                        finished=studies.iso_time(time.time()), **study)
    stored = studies.same_study(study.to_dict())
    if stored is not None:  # one study per configuration and inputs: the stored one, nothing new written
        if asked_id and asked_id != stored["id"]:  # a job that chose its id links to the study it ran
            studies.record_same(data.name, asked_id, stored["id"])
        tracker.finish()
        log(f"[{data.name}] the same as stored study {stored['id']} (same configuration, same inputs, same "
            f"result): nothing new stored")
        return StudyResult.from_dict(stored)
    path = studies.save_study(study.to_dict())
    tracker.finish()
    log(f"[{data.name}] study {study_id} stored: {path}")
    return study


def keyed_values(result: TaskResult, log) -> dict[tuple[str, str | None], PerQueryValues]:
    """``{(key, setup): values}`` of one task's systems, keyed by their full identity where they have
    one (:func:`pipeline.study.components.component_keys`: two systems sharing a name are both kept);
    the same key twice keeps the later values in the first one's place."""
    keys = [v.system for v in result] if all(v.identity is None for v in result) else \
        component_keys([(v.system, v.identity or {}) for v in result])
    out, told = {}, set()
    for key, values in zip(keys, result):
        if key != values.system and (values.system, key) not in told:
            told.add((values.system, key))
            log(f"[{result.dataset}] {result.role} {values.system} is kept as {key!r}: another one has the same name")
        out[(key, values.setup)] = values
    return out


def _run_tasks(config: StudyConfig, context: StepContext) -> dict:
    """The study's fields after ``id``, ``configuration``, ``time`` and ``finished`` (:class:`StudyResult`)."""
    data = config.data()
    qrels = data.require_qrels()
    study: dict = {"dataset": data.name, "source": data.source, "coverage": data.coverage.as_dict(),
                   "quantile": config.quantile, "conventions": CONVENTIONS, "cap": config.cap,
                   "partial_references": config.partial_references, "universe": config.universe,
                   "data_folder": str(data.folder) if data.folder is not None else None,
                   "queries": data.queries(),
                   # the texts the page shows beside an answer (grade 2-3 passages that have text), with grades
                   "relevant_passages": {qid: data.relevant_passages(qid) for qid in data.queries()},
                   "relevant_grades": {qid: {pid: qrels[qid][pid] for pid in data.relevant_passages(qid)}
                                       for qid in data.queries()},
                   **{task.section: {} for task in STUDY_TASKS}, "configurations": {}}
    tasks = study_tasks(config)
    results = [task.run(config, context) for task in tasks]  # every step before any key is logged
    keyed, further = {}, {}
    for task, result in zip(tasks, results):
        keyed[task.name] = keyed_values(result, context.log)
        if task.further:  # stored generically, each system under its key
            keyed[task.name] = {(key, setup): replace(v, system=key) for (key, setup), v in keyed[task.name].items()}
            further[task.name] = task.result(result.dataset, result.quantile, list(keyed[task.name].values()))
            continue
        for (key, setup), values in keyed[task.name].items():
            section = study[task.section]
            if setup is None:
                section[key] = values.record
            else:
                section.setdefault(key, {})[setup] = values.record
    if further:
        study["further_tasks"] = further
    context.tracker.stage("overlap of every configuration")
    for (r, _), retrieved in keyed["h2r"].items():
        for (g, _), generated in keyed["h2g"].items():
            for (j, setup), judged in keyed["h2j"].items():
                for extra in product(*(keyed[t].values() for t in further)):  # one empty tuple without any
                    components = Components(r, g, j, setup, tuple((v.task, v.label) for v in extra))
                    chosen = {"h2r": retrieved, "h2g": generated, "h2j": judged, **{v.task: v for v in extra}}
                    result = combine(data.name, components.to_dict(), {t: v.values for t, v in chosen.items()}, {},
                                     config.quantile, universe=config.universe, n_judged=len(data.queries()),
                                     top={t for t, v in chosen.items() if v.hard_is_top})
                    study["configurations"][components.label] = configuration_result(components, chosen, result)
    study["stability"] = stability_table({k: v.analysis for k, v in study["configurations"].items()})
    return study


def configuration_result(components: Components, chosen: dict[str, PerQueryValues],
                         result: FailureSets) -> ConfigurationResult:
    """One configuration as the study stores it, with the note of a small model among its systems
    (its figures exercise the pipeline; they are not a finding) and which roles' models are gated and why
    (:attr:`pipeline.llm.base.Provenance.evidence_gate`: a sub-1B model or one of unknown size; the findings
    read such a configuration as inconclusive)."""
    models = {TASK_REGISTRY[t].role: Provenance.from_dict(v.model) for t, v in chosen.items() if v.model is not None}
    small = [role for role, model in models.items() if model.small]
    gated = {role: model.evidence_gate for role, model in models.items() if model.evidence_gate}
    return ConfigurationResult(components, result.sets,
                               {t: SetSummary.from_dict(s) for t, s in result.set_info.items()}, result.analysis,
                               small, f"{' and '.join(small)} from {models[small[0]].not_a_finding}" if small else "",
                               UniverseSummary.from_dict(result.universe_info), gated)


def task_hard_set(values: dict[str, float], task: str, quantile: float):
    """``task``'s hard set over every query in ``values``, at the end its direction says is hard."""
    return TASKS_BY_NAME[task].hard_set(values, quantile)


def read_tasks(study: StudyResult) -> dict[str, TaskResult]:
    """Every task's values as a stored study holds them (any version the store opens), by task name: the
    three tasks', then each further task's (read generically: its class need not be imported)."""
    return {**{task.name: task.read_study(study) for task in STUDY_TASKS}, **study.further_tasks}


def failure_sets(config: StudyConfig, *, progress: bool = False) -> FailureSets:
    """The three hard sets of one configuration (``config`` names one retriever, generator, judge and
    setup), with their values and the generated answers. Further tasks are composed by :func:`run_study` only."""
    if config.further_tasks:
        raise ValueError(f"one configuration's sets are the three tasks'; further tasks "
                         f"({', '.join(t for t, _ in config.further_tasks)}) run in a study (run_study)")
    for section in ("retrievers", "generators", "judges", "setups"):
        if len(getattr(config, section)) != 1:
            raise ValueError(f"one configuration has one of each component; got {section} "
                             f"{list(getattr(config, section))}")
    context = StepContext(progress=progress)
    chosen = {task.name: task.run(config, context).values[0] for task in STUDY_TASKS}
    names = {TASKS_BY_NAME[t].role: v.system for t, v in chosen.items()}
    data = config.data()
    return combine(data.name, {**names, "setup": chosen["h2j"].setup}, {t: v.values for t, v in chosen.items()},
                   chosen["h2g"].record.answers, config.quantile,
                   {**{TASKS_BY_NAME[t].role: v.provenance for t, v in chosen.items()}, "conventions": CONVENTIONS},
                   universe=config.universe, n_judged=len(data.queries()))
