"""The failure study's steps for one collection: retrieval (H2R), generation (H2G) and judgment (H2J)
values per query, their hard sets, and every configuration's overlap (``run_study``).

Components are named on the command line as ``NAME[=FILE]``:

- retriever: ``NAME=RUNFILE`` imports a run; ``NAME`` alone is the data folder's
  ``runs/run.NAME.<dataset>.txt``, else computed here (``pipeline.retrieval.retrievers.get_run``);
- generator: ``NAME=FILE.jsonl`` imports answers; ``NAME`` alone is an LLM spec
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
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from core import paths
from core.atomic import atomic_write_text
from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.sets.rule import DEFAULT_QUANTILE, HardSet, SetSummary, hard_set
from pipeline.sets.overlap import TASKS, overlap_analysis, stability_table
from pipeline.study.result import (Components, ConfigurationResult, GeneratorResult, JudgeResult, StudyResult)
from pipeline.study.components import component_keys, identity, identity_digest, parse_component
from pipeline.study.config import StudyConfig, folder_judgments, slug
from pipeline.study.conventions import CONVENTIONS
from pipeline.study.task import StepContext
from pipeline.study.tasks.h2r import RetrievalTask
from pipeline.study.universe import DEFAULT_UNIVERSE, UniverseSummary, draw_sets
from pipeline.generation.h2g import generation_values, reference_note, truncation_note
from pipeline.judging.h2j import judgment_values


def _require_query_texts(data) -> dict[str, str]:
    queries = data.queries()
    missing = [qid for qid, text in queries.items() if not text.strip()]
    if missing:
        raise ValueError(f"{data.name}: {len(missing)} queries have no text (e.g. {missing[0]}); "
                         f"an LLM step needs --topics")
    return queries


def study_dir(data) -> Path:
    return paths.cache_subdir("failure", slug(data.name))


class StudyStepError(RuntimeError):
    """A study step that produced nothing to go on with (e.g. a generator that answered no query):
    the run stops there and stores no result."""


def _last_error(failed: dict[str, str]) -> str:
    return " ".join(str(list(failed.values())[-1]).split()) if failed else "(none recorded)"


# ---- the three tasks' per-query values ------------------------------------------------------------
def answer_queries(data, partial_references: str = "exclude") -> tuple[dict[str, str], dict[str, str]]:
    """``(queries to answer, {qid: why not})``: the judged queries H2G can score under
    ``partial_references``, and the others (:func:`pipeline.generation.h2g.unscorable_queries`)."""
    from pipeline.generation.h2g import unscorable_queries

    skipped = unscorable_queries(data, partial_references)
    return {q: text for q, text in data.queries().items() if q not in skipped}, skipped


def generation_for(data, arg: str, *, llm_options: dict | None = None, progress: bool = True, on_progress=None,
                   partial_references: str = "exclude"):
    """The answers of generator ``arg`` (imported, or generated and stored under cache/failure/);
    an LLM generator that answered no query raises (:mod:`pipeline.generation.answers`), so the study stops there.
    An LLM is asked only for the queries H2G can score under ``partial_references`` (:func:`answer_queries`;
    the others are recorded in ``not_generated``); an answers file is read whole."""
    from pipeline.generation.answers import Generation, generate_answers, import_answers
    from pipeline.llm import make_client

    name, file = parse_component(arg, "--generator")
    if file is not None:
        return import_answers(name, file, known_qids=data.topics)
    _require_query_texts(data)
    queries, skipped = answer_queries(data, partial_references)
    client = make_client(name, **{"step": "generation", **(llm_options or {})})
    # a generator that answers nothing raises (pipeline.generation.answers): the step, and the study, stop here
    gen = generate_answers(client, queries, on_progress=on_progress,
                           progress=f"{data.name} answers ({client.provenance.label})" if progress else None)
    gen.not_generated = skipped
    # named by the full identity too: the same model from two hosts must not overwrite one file
    path = study_dir(data) / "generations" / f"{slug(gen.name)}-{identity_digest(identity(gen.provenance))}.json"
    atomic_write_text(path, json.dumps(gen.as_dict(), ensure_ascii=False, indent=1))
    return Generation.from_dict(gen.as_dict())


def judgments_for(data, arg: str, setup: str, *, cap: int | None, llm_options: dict | None = None,
                  progress: bool = True, on_progress=None, on_total=None):
    """The judgments of judge ``arg`` (imported, or made by an LLM); :class:`StudyStepError` when an
    LLM judge labelled no pair."""
    from pipeline.judging.judgments import import_judgments, llm_judgments
    from pipeline.llm import make_client

    name, file = parse_component(arg, "--judge")
    if file is None:
        file = folder_judgments(data.folder, data.name).get(name)
    if file is not None:
        return import_judgments(name, file, setup, known_qids=data.topics)
    _require_query_texts(data)
    client = make_client(name, **{"step": f"judgments:{setup}", **(llm_options or {})})
    judgments = llm_judgments(client, data, setup, cap=cap, on_progress=on_progress, on_total=on_total,
                              progress=f"{data.name} {setup} judgments ({client.provenance.label})" if progress
                              else None)
    if judgments.failed and not judgments.labels and not judgments.unparseable:
        failed = {f"{q} {p}": e for q, per in judgments.failed.items() for p, e in per.items()}
        raise StudyStepError(f"{data.name}: judge {client.provenance.label} ({setup}) answered none of "
                             f"{len(failed)} pairs; last error: {_last_error(failed)}")
    return judgments


# ---- sets and configurations ----------------------------------------------------------------------
def task_hard_set(values: dict[str, float], task: str, quantile: float, universe=None) -> HardSet:
    """``task``'s hard set through the one rule of :func:`pipeline.sets.rule.hard_set` (H2J: the top)."""
    scope = {q: v for q, v in values.items() if universe is None or q in universe}
    return hard_set(scope, quantile, task, top=task == "h2j")


def h2j_sets(data, judge: str, setups=("binary", "graded"), *, quantile: float = DEFAULT_QUANTILE,
             cap: int | None = DEFAULT_CAP, llm_options: dict | None = None, progress: bool = True) -> dict:
    """One judge's H2J over ``data`` per judging setup: ``{"dataset", "quantile", SETUP: {"judge",
    "per_query", "h2j", "h2j_set", ...}}`` (the judge's disagreement per query and its hard set over
    every query it judged; the ``h2j`` command)."""
    out = {"dataset": data.name, "quantile": quantile}
    for setup in setups:
        judgments = judgments_for(data, judge, setup, cap=cap, llm_options=llm_options, progress=progress)
        values, info = judgment_values(data, judgments)
        hard = task_hard_set(values, "h2j", quantile)
        out[setup] = {"judge": judgments.judge, "per_query": values, "h2j": list(hard.qids),
                      "h2j_set": SetSummary.of(hard).to_dict(), **info}
    return out


def h2g_sets(data, generators, *, quantile: float = DEFAULT_QUANTILE, encoder: str = "auto",
             aggregate: str = "max", partial_references: str = "exclude", llm_options: dict | None = None,
             progress: bool = True, truncated_answers: str = "exclude") -> dict:
    """Each generator's H2G over ``data``: ``{"dataset", "quantile", "generators": {NAME: {"provenance",
    "per_query", "h2g", "h2g_set", ...}}}`` (BERTScore per query and the hard set over every query
    scored; the ``h2g`` command)."""
    out = {"dataset": data.name, "quantile": quantile, "generators": {}}
    for arg in generators:
        gen = generation_for(data, arg, llm_options=llm_options, progress=progress,
                             partial_references=partial_references)
        values, info = generation_values(data, gen, encoder, aggregate, partial_references, truncated_answers)
        hard = task_hard_set(values, "h2g", quantile)
        out["generators"][gen.name] = {"provenance": gen.provenance, "per_query": values, "h2g": list(hard.qids),
                                       "h2g_set": SetSummary.of(hard).to_dict(), **info,
                                       "finish_reasons": gen.finish_reasons}
    return out


def hard_over_all_queries(values: dict[str, float], task: str, quantile: float) -> tuple[list[str], SetSummary | None]:
    """A component's set over every query it scores, and how the rule drew it (``([], None)`` without
    any): what a component's result records beside its values (``pipeline.study.result``; the study's
    figures use each configuration's sets over its universe instead)."""
    if not values:
        return [], None
    hard = task_hard_set(values, task, quantile)
    return list(hard.qids), SetSummary.of(hard)


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
            n_judged: int = 0) -> FailureSets:
    """The three sets under the ``universe`` rule (:func:`pipeline.study.universe.draw_sets`) and their
    overlap analysis over the common universe; ``n_judged``: the judged queries (for the size warning)."""
    common, hard, sets, summary = draw_sets({task: values[task] for task in TASKS}, quantile, universe, n_judged)
    if len(common) < 4:
        raise ValueError(f"{dataset}: only {len(common)} queries are scored by all three tasks")
    return FailureSets(dataset, {**configuration, "quantile": quantile, "universe": universe}, sets,
                       {t: {q: values[t][q] for q in common} for t in values}, common, answers,
                       overlap_analysis(sets, common), provenance or {},
                       {task: SetSummary.of(h).to_dict() for task, h in hard.items()}, summary.to_dict())


def run_study(config, *, log=print, study_id: str | None = None, progress_key: str | None = None,
              progress: bool = True, **settings) -> StudyResult:
    """Every task of :data:`STUDY_TASKS` for every component of ``config`` (a
    :class:`pipeline.study.config.StudyConfig`), then every configuration's overlap; stored as a new
    study (:mod:`pipeline.study.store`, atomically, under ``study_id`` or a new id) and returned. A
    step that fails stops the run before anything is stored. Resumable: LLM answers come from the
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
    study_id = studies.check_study_id(study_id) if study_id else studies.new_study_id(configuration, started)
    stages = (RetrievalTask().stages(config) + 2 * len(config.generators) + len(config.judges) * len(config.setups)
              + 1)
    tracker = ProgressWriter(progress_key, stages)
    try:
        study = _run_steps(config, StepContext(log, tracker, progress))
    except BaseException as exc:
        tracker.finish(error=" ".join(str(exc).split()) or type(exc).__name__)
        raise
    study = StudyResult(id=study_id, configuration=configuration, time=studies.iso_time(started),
                        finished=studies.iso_time(time.time()), **study)
    path = studies.save_study(study.to_dict())
    tracker.finish()
    log(f"[{data.name}] study {study_id} stored: {path}")
    return study


def _run_steps(config: StudyConfig, context: StepContext) -> dict:
    """The study's fields after ``id``, ``configuration``, ``time`` and ``finished`` (:class:`StudyResult`)."""
    data, quantile, log, tracker, progress = config.data(), config.quantile, context.log, context.tracker, \
        context.progress
    llm_options, partial_references, cap = config.llm_options, config.partial_references, config.cap
    qrels = data.require_qrels()
    study: dict = {"dataset": data.name, "source": data.source, "coverage": data.coverage.as_dict(),
                   "quantile": quantile, "conventions": CONVENTIONS, "cap": cap,
                   "partial_references": partial_references, "universe": config.universe,
                   "data_folder": str(data.folder) if data.folder is not None else None,
                   "queries": data.queries(),
                   # the texts the page shows beside an answer (grade 2-3 passages that have text), with grades
                   "relevant_passages": {qid: data.relevant_passages(qid) for qid in data.queries()},
                   "relevant_grades": {qid: {pid: qrels[qid][pid] for pid in data.relevant_passages(qid)}
                                       for qid in data.queries()},
                   "retrievers": {}, "generators": {}, "judges": {}, "configurations": {}}
    for entry in RetrievalTask().run(config, context):
        study["retrievers"][entry.system] = entry.record
    generated = []  # (name, identity, result): keyed below by identity (pipeline.study.components)
    for arg in config.generators:
        tracker.stage(f"answers of {arg}", len(answer_queries(data, partial_references)[0]), "answer")
        gen = generation_for(data, arg, llm_options=llm_options, progress=progress, on_progress=tracker.advance,
                             partial_references=partial_references)
        tracker.stage(f"BERTScore of {gen.name}")
        values, info = generation_values(data, gen, config.encoder, config.aggregate, partial_references,
                                         config.truncated_answers)
        generated.append((gen.name, identity(gen.provenance, gen.source), GeneratorResult(
            gen.provenance, gen.prompt, gen.options, gen.source, gen.failed, info, values, gen.answers,
            *hard_over_all_queries(values, "h2g", quantile), finish_reasons=gen.finish_reasons)))
        log(f"[{data.name}] generator {gen.name}: {len(values)} queries scored ({info['encoder']}); "
            + reference_note(info) + "; " + truncation_note(info))
    judged = []  # (name, identity, {setup: result})
    for arg in config.judges:
        per_setup = {}
        for setup in config.setups:
            tracker.stage(f"{setup} judgments of {arg}", 0, "pair")
            judgments = judgments_for(data, arg, setup, cap=cap, llm_options=llm_options, progress=progress,
                                      on_progress=tracker.advance, on_total=tracker.set_total)
            values, info = judgment_values(data, judgments)
            per_setup[setup] = JudgeResult(info, values, judgments.labels, judgments.unparseable,
                                           *hard_over_all_queries(values, "h2j", quantile))
            log(f"[{data.name}] judge {judgments.judge} ({setup}): {len(values)} queries, "
                f"{info['n_unparseable']} unparseable")
        judged.append((judgments.judge, identity(judgments.provenance, judgments.source), per_setup))
    for kind, done in (("generators", generated), ("judges", judged)):
        for key, (name, _, result) in zip(component_keys([(name, ident) for name, ident, _ in done]), done):
            if key != name:
                log(f"[{data.name}] {kind[:-1]} {name} is kept as {key!r}: another one has the same name")
            study[kind][key] = result
    tracker.stage("overlap of every configuration")
    for r, retriever in study["retrievers"].items():
        for g, generator in study["generators"].items():
            for j, per_setup in study["judges"].items():
                for setup, judge in per_setup.items():
                    components = Components(r, g, j, setup)
                    models = {"generator": generator.model, "judge": judge.model}
                    small = [what for what, model in models.items() if model.small]
                    result = combine(data.name, components.to_dict(), {
                        "h2r": retriever.per_query, "h2g": generator.per_query, "h2j": judge.per_query}, {}, quantile,
                        universe=config.universe, n_judged=len(data.queries()))
                    study["configurations"][components.label] = ConfigurationResult(
                        components, result.sets, {t: SetSummary.from_dict(s) for t, s in result.set_info.items()},
                        result.analysis, small,
                        f"{' and '.join(small)} from {models[small[0]].not_a_finding}" if small else "",
                        UniverseSummary.from_dict(result.universe_info))
    study["stability"] = stability_table({k: v.analysis for k, v in study["configurations"].items()})
    return study


def failure_sets(config: StudyConfig, *, progress: bool = False) -> FailureSets:
    """The three hard sets of one configuration (``config`` names one retriever, generator, judge and
    setup), with their values and the generated answers."""
    for section in ("retrievers", "generators", "judges", "setups"):
        if len(getattr(config, section)) != 1:
            raise ValueError(f"one configuration has one of each component; got {section} "
                             f"{list(getattr(config, section))}")
    data = config.data()
    context = StepContext(progress=progress)
    (retrieved,) = RetrievalTask().run(config, context)
    (generator,), (judge,), (setup,) = config.generators, config.judges, config.setups
    gen = generation_for(data, generator, llm_options=config.llm_options, progress=progress,
                         partial_references=config.partial_references)
    gvalues, ginfo = generation_values(data, gen, config.encoder, config.aggregate, config.partial_references,
                                       config.truncated_answers)
    judgments = judgments_for(data, judge, setup, cap=config.cap, llm_options=config.llm_options, progress=progress)
    jvalues, jinfo = judgment_values(data, judgments)
    names = {"retriever": retrieved.system, "generator": gen.name, "judge": judgments.judge, "setup": setup}
    return combine(data.name, names, {"h2r": retrieved.values, "h2g": gvalues, "h2j": jvalues}, gen.answers,
                   config.quantile,
                   {"retriever": retrieved.provenance, "generator": {"provenance": gen.provenance, "bertscore": ginfo,
                                                                   "prompt": gen.prompt, "options": gen.options,
                                                                   "finish_reasons": gen.finish_reasons},
                    "judge": jinfo, "conventions": CONVENTIONS}, universe=config.universe,
                   n_judged=len(data.queries()))
