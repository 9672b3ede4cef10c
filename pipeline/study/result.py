"""The failure study's result as types: what ``pipeline.study.run.run_study`` returns, the studies store
keeps (:mod:`pipeline.study.store`, as JSON) and the page and the CLI read, field by field.

The JSON form (:meth:`StudyResult.to_dict`, :meth:`StudyResult.from_dict`) is the study file's: the
same keys, values and key order as the files stored before these types existed, so stored studies
read back unchanged and ``python -m pipeline run --json`` prints the same bytes. Keys that older
studies lack read as None: ``relevant_grades``, ``set_info`` and ``migrated_from`` are written back
only when present; a component's ``*_set`` (null also in new studies, for a component that scored no
query) is written as null.

Two kinds of hard set, never to be confused (docs/ARCHITECTURE.md, "H2R over all queries"):

- ``*.hard_all_queries`` of a component (:class:`RetrieverResult`, :class:`GeneratorResult`,
  :class:`JudgeResult`): the task's set over every query that component scores, the same set
  ``python -m pipeline h2r|h2g|h2j`` reports for it. Recorded to describe the component; no figure
  of the study is computed from it.
- :attr:`ConfigurationResult.hard_in_universe`: the three sets of one configuration within its
  *common universe* (the queries all three tasks score). These are the study's sets: every overlap
  figure, the Venn diagram, the stability table and the comparison of two studies use them. Under the
  ``per-task`` universe rule (default) each is the task's own set (its quantile over the queries it
  scores) restricted to the common universe; under ``common`` (every study stored before the choice)
  the quantile is taken within the common universe (:mod:`pipeline.study.universe`).

A further task (:mod:`pipeline.study.task`: a registered task without a section of its own) is kept
generically in :attr:`StudyResult.further_tasks` (JSON ``further_tasks``, written only when there is one: a
three-task study's file is as before); its systems join :class:`Components` (``further``) and its set the
configuration's ``sets``.

Under ``common`` they differ when a task scores fewer queries than the retriever (H2G leaves out
queries without reference text; a judge may not cover every query): the rule then picks its quantile
of a smaller N. :meth:`StudyResult.universe_summary` gives each task's n and the common universe's n.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pipeline.sets.rule import SetSummary
from pipeline.llm.base import Provenance
from pipeline.study.values import PerQueryValues, TaskResult
from pipeline.study.universe import UniverseSummary, stored_rule


def _summary_or_none(data: Mapping | None) -> SetSummary | None:
    return SetSummary.from_dict(data) if data is not None else None


def _optional(**items) -> dict:
    """The keys whose value was recorded (older studies lack them; see the module docstring)."""
    return {k: v for k, v in items.items() if v is not None}


@dataclass
class RetrieverResult:
    """One retriever's per-query nDCG@10 and its H2R set over every query it scores.
    JSON: ``{info, per_query, h2r, h2r_set}``."""
    info: dict  # pipeline.retrieval.retrievers.RetrieverRun.as_dict(): name, kind, provenance, settings
    per_query: dict[str, float]
    hard_all_queries: list[str]  # H2R over all scored queries (module docstring), hardest first
    hard_all_queries_rule: SetSummary | None  # how the rule drew it (None: stored before the tie rule)

    def to_dict(self) -> dict:
        return {"info": self.info, "per_query": self.per_query, "h2r": self.hard_all_queries,
                "h2r_set": self.hard_all_queries_rule.to_dict() if self.hard_all_queries_rule else None}

    @classmethod
    def from_dict(cls, data: Mapping) -> RetrieverResult:
        return cls(data["info"], data["per_query"], data["h2r"], _summary_or_none(data.get("h2r_set")))


@dataclass
class GeneratorResult:
    """One generator's answers, their BERTScore F1 per query and its H2G set over every scored query.
    JSON: ``{provenance, prompt, options, source, failed, bertscore, per_query, answers, h2g, h2g_set,
    finish_reasons}`` (the last only when recorded)."""
    provenance: dict  # pipeline.llm provenance (label, backend, model, small, note) or "imported"
    prompt: object
    options: dict
    source: object
    failed: dict[str, str]  # qid -> why the call failed
    bertscore: dict  # pipeline.generation.h2g.generation_values' record (encoder, aggregate, exclusions, coverage)
    per_query: dict[str, float]
    answers: dict[str, str]
    hard_all_queries: list[str]  # H2G over all scored queries (module docstring), hardest first
    hard_all_queries_rule: SetSummary | None
    finish_reasons: dict[str, str] | None = None  # qid -> why the model stopped (None: imported, or stored before)

    @property
    def model(self) -> Provenance:
        """The provenance record as a :class:`pipeline.llm.base.Provenance` (``small``, ``not_a_finding``)."""
        return Provenance.from_dict(self.provenance)

    def to_dict(self) -> dict:
        return {"provenance": self.provenance, "prompt": self.prompt, "options": self.options, "source": self.source,
                "failed": self.failed, "bertscore": self.bertscore, "per_query": self.per_query,
                "answers": self.answers, "h2g": self.hard_all_queries,
                "h2g_set": self.hard_all_queries_rule.to_dict() if self.hard_all_queries_rule else None,
                **_optional(finish_reasons=self.finish_reasons or None)}

    @classmethod
    def from_dict(cls, data: Mapping) -> GeneratorResult:
        return cls(data["provenance"], data.get("prompt"), data.get("options"), data.get("source"),
                   data.get("failed", {}), data["bertscore"], data["per_query"], data["answers"], data["h2g"],
                   _summary_or_none(data.get("h2g_set")), data.get("finish_reasons"))


@dataclass
class JudgeResult:
    """One judge in one setup (binary or graded): its labels, the per-query disagreement with NIST
    and its H2J set over every query it judged. JSON: ``{info, per_query, labels, unparseable, h2j, h2j_set}``."""
    info: dict  # pipeline.judging.h2j.disagreement's counts + provenance + source
    per_query: dict[str, float]
    labels: dict
    unparseable: dict
    hard_all_queries: list[str]  # H2J over all judged queries (module docstring), hardest first
    hard_all_queries_rule: SetSummary | None

    @property
    def provenance(self) -> dict:
        return self.info["provenance"]

    @property
    def model(self) -> Provenance:
        """The judge's provenance as a :class:`pipeline.llm.base.Provenance` (``small``, ``not_a_finding``)."""
        return Provenance.from_dict(self.provenance)

    def to_dict(self) -> dict:
        return {"info": self.info, "per_query": self.per_query, "labels": self.labels,
                "unparseable": self.unparseable, "h2j": self.hard_all_queries,
                "h2j_set": self.hard_all_queries_rule.to_dict() if self.hard_all_queries_rule else None}

    @classmethod
    def from_dict(cls, data: Mapping) -> JudgeResult:
        return cls(data["info"], data["per_query"], data.get("labels", {}), data.get("unparseable", {}),
                   data["h2j"], _summary_or_none(data.get("h2j_set")))


@dataclass(frozen=True)
class Components:
    """What one configuration combines: a retriever, a generator, a judge and its setup, and a system of
    each further task (``((task, system label), ...)``, none in a three-task study)."""
    retriever: str
    generator: str
    judge: str
    setup: str
    further: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """``retriever | generator | judge | setup`` (`` | system`` per further task): the configuration's key."""
        return " | ".join([self.retriever, self.generator, self.judge, self.setup, *(s for _, s in self.further)])

    def to_dict(self) -> dict:
        return {"retriever": self.retriever, "generator": self.generator, "judge": self.judge, "setup": self.setup,
                **({"further_tasks": dict(self.further)} if self.further else {})}

    @classmethod
    def from_dict(cls, data: Mapping) -> Components:
        return cls(data["retriever"], data["generator"], data["judge"], data["setup"],
                   tuple((data.get("further_tasks") or {}).items()))


@dataclass
class ConfigurationResult:
    """One configuration's three sets over its universe and their overlap figures.
    JSON: ``{configuration, sets, set_info, analysis, small_model, note, universe_info, gated}`` (the last two
    only when recorded)."""
    components: Components
    hard_in_universe: dict[str, list[str]]  # task -> the study's set (module docstring), hardest first
    hard_in_universe_rule: dict[str, SetSummary] | None  # task -> how the rule drew it (None: before the tie rule)
    analysis: dict  # pipeline.sets.overlap.overlap_analysis of hard_in_universe: the figures shown
    small_model: list[str] = field(default_factory=list)  # "generator" / "judge" when that model is small
    note: str = ""  # Provenance.not_a_finding of a small model (its figures exercise the pipeline)
    universe: UniverseSummary | None = None  # rule and sizes (None: stored before the universe choice)
    # role -> why that role's model cannot carry a verdict (Provenance.evidence_gate: sub-1B or unknown size);
    # {} when none is gated; None: stored before issue 33 (StudyResult.model_gates derives it then)
    gated: dict[str, str] | None = None

    @property
    def label(self) -> str:
        return self.components.label

    def to_dict(self) -> dict:
        return {"configuration": self.components.to_dict(), "sets": self.hard_in_universe,
                **_optional(set_info=None if self.hard_in_universe_rule is None else
                            {task: s.to_dict() for task, s in self.hard_in_universe_rule.items()}),
                "analysis": self.analysis, "small_model": self.small_model, "note": self.note,
                **_optional(universe_info=self.universe.to_dict() if self.universe else None, gated=self.gated)}

    @classmethod
    def from_dict(cls, data: Mapping) -> ConfigurationResult:
        rule = data.get("set_info")
        universe = data.get("universe_info")
        gated = data.get("gated")
        return cls(Components.from_dict(data["configuration"]), data["sets"],
                   {task: SetSummary.from_dict(s) for task, s in rule.items()} if rule else None,
                   data["analysis"], data.get("small_model", []), data.get("note", ""),
                   UniverseSummary.from_dict(universe) if universe else None,
                   dict(gated) if gated is not None else None)


@dataclass
class StudyResult:
    """One stored study: what it was asked to do, the components' values and sets, and every
    configuration's sets and overlap. JSON: the study file (:mod:`pipeline.study.store`)."""
    id: str
    configuration: dict  # pipeline.study.config.StudyConfig.stored(): what the run was asked (hashed into the id)
    time: str  # ISO 8601 UTC: started
    finished: str
    dataset: str
    source: str
    coverage: dict  # pipeline.data.datasets corpus coverage
    quantile: float
    conventions: dict  # pipeline.study.run.CONVENTIONS when it ran
    cap: int | None
    partial_references: str | None
    data_folder: str | None
    queries: dict[str, str]
    relevant_passages: dict[str, dict[str, str]]  # qid -> pid -> text (grade 2-3 passages that have text)
    relevant_grades: dict[str, dict[str, int]] | None  # qid -> pid -> grade (None: stored before grades were)
    retrievers: dict[str, RetrieverResult]
    generators: dict[str, GeneratorResult]
    judges: dict[str, dict[str, JudgeResult]]  # judge -> setup -> result
    configurations: dict[str, ConfigurationResult]  # label -> result
    stability: list[dict]  # pipeline.sets.overlap.stability_table rows
    migrated_from: str | None = None  # a legacy study.json's path (pipeline.study.store.migrate_legacy)
    universe: str | None = None  # "per-task" | "common" (None: stored before the choice: common)
    # the tasks beyond the paper's three, generically (pipeline.study.task): task name -> its TaskResult
    further_tasks: dict[str, TaskResult] = field(default_factory=dict)

    @property
    def universe_rule(self) -> str:
        """The universe rule the study's sets were drawn under (a study stored before the choice: common)."""
        return stored_rule(self.universe)

    def universe_summary(self, label: str) -> UniverseSummary:
        """A configuration's rule and sizes: as stored, or for a study stored before the choice derived from
        its components' values (rule common, ``recorded`` False)."""
        config = self.configurations[label]
        if config.universe is not None:
            return config.universe
        values = {"h2r": self.retriever(label).per_query, "h2g": self.generator(label).per_query,
                  "h2j": self.judge(label).per_query}
        return UniverseSummary(self.universe_rule, config.analysis["n_queries"], len(self.queries),
                               {t: len(v) for t, v in values.items()}, {t: 0 for t in values}, recorded=False)

    def universe_ids(self, label: str) -> list[str]:
        """A configuration's common universe: the queries every one of its systems scores, sorted (the same
        rule as :func:`pipeline.study.universe.common_universe`, over the stored per-query values)."""
        scored = [set(self.retriever(label).per_query), set(self.generator(label).per_query),
                  set(self.judge(label).per_query), *(set(v.values) for v in self.further_values(label).values())]
        return sorted(set.intersection(*scored))

    def model_gates(self, label: str) -> dict[str, str]:
        """A configuration's gated roles and why (:attr:`ConfigurationResult.gated`): as recorded, or for a
        study stored before they were, from its generator's and judge's stored provenance (the same rule,
        :attr:`pipeline.llm.base.Provenance.evidence_gate`)."""
        config = self.configurations[label]
        if config.gated is not None:
            return dict(config.gated)
        stored = {"generator": self.generator(label).provenance, "judge": self.judge(label).provenance}
        models = {role: Provenance.from_dict(p if isinstance(p, Mapping) else {}) for role, p in stored.items()}
        return {role: model.evidence_gate for role, model in models.items() if model.evidence_gate}

    def retriever(self, label: str) -> RetrieverResult:
        return self.retrievers[self.configurations[label].components.retriever]

    def generator(self, label: str) -> GeneratorResult:
        return self.generators[self.configurations[label].components.generator]

    def judge(self, label: str) -> JudgeResult:
        c = self.configurations[label].components
        return self.judges[c.judge][c.setup]

    def further_values(self, label: str) -> dict[str, PerQueryValues]:
        """A configuration's system of each further task: task name -> its values (none: ``{}``)."""
        by_label = {t: {v.label: v for v in result} for t, result in self.further_tasks.items()}
        return {task: by_label[task][system] for task, system in self.configurations[label].components.further}

    def to_dict(self) -> dict:
        return {"id": self.id, "configuration": self.configuration, "time": self.time, "finished": self.finished,
                "dataset": self.dataset, "source": self.source, "coverage": self.coverage,
                "quantile": self.quantile, "conventions": self.conventions, "cap": self.cap,
                "partial_references": self.partial_references, **_optional(universe=self.universe),
                "data_folder": self.data_folder,
                "queries": self.queries, "relevant_passages": self.relevant_passages,
                **_optional(relevant_grades=self.relevant_grades),
                "retrievers": {name: r.to_dict() for name, r in self.retrievers.items()},
                "generators": {name: g.to_dict() for name, g in self.generators.items()},
                "judges": {name: {setup: j.to_dict() for setup, j in per.items()} for name, per in self.judges.items()},
                **_optional(further_tasks={t: r.to_dict() for t, r in self.further_tasks.items()} or None),
                "configurations": {label: c.to_dict() for label, c in self.configurations.items()},
                "stability": self.stability, **_optional(migrated_from=self.migrated_from)}

    @classmethod
    def from_dict(cls, data: Mapping) -> StudyResult:
        return cls(
            id=data["id"], configuration=data.get("configuration", {}), time=data.get("time"),
            finished=data.get("finished"), dataset=data["dataset"], source=data.get("source", ""),
            coverage=data.get("coverage", {}), quantile=data["quantile"], conventions=data.get("conventions", {}),
            cap=data.get("cap"), partial_references=data.get("partial_references"),
            data_folder=data.get("data_folder"), queries=data["queries"],
            relevant_passages=data.get("relevant_passages", {}), relevant_grades=data.get("relevant_grades"),
            retrievers={name: RetrieverResult.from_dict(r) for name, r in data["retrievers"].items()},
            generators={name: GeneratorResult.from_dict(g) for name, g in data["generators"].items()},
            judges={name: {setup: JudgeResult.from_dict(j) for setup, j in per.items()}
                    for name, per in data["judges"].items()},
            configurations={label: ConfigurationResult.from_dict(c) for label, c in data["configurations"].items()},
            stability=data.get("stability", []), migrated_from=data.get("migrated_from"),
            universe=data.get("universe"),
            further_tasks={t: TaskResult.from_dict(data["dataset"], r)
                           for t, r in data.get("further_tasks", {}).items()})
