"""The hard queries of one task under one configuration, with their task context, for a typology run.

Each step computes only what the set and the context depend on (:func:`hard_queries`). Under the
study's default universe rule (``per-task``, :mod:`pipeline.study.universe`) a task's hard set is its
quantile over the queries that task scores, so an H2R typology needs the retriever alone (no answer
is generated, no pair judged), an H2J typology the judge alone and an H2G typology the generator
and BERTScore alone; the reason prompts' contexts need no more either (``pipeline.typology.context``:
H2R the retrieved passages, H2G the answer and the reference passages, H2J the judge's and NIST's
labels). Only ``universe="common"`` (each quantile within the queries all three tasks score) needs
all three components, and then the set is the one the overlap analysis draws
(``pipeline.study.run.combine``). ``max_queries`` keeps the hardest ``N`` (the cap is recorded in the
run's ``hard_set`` description, so a capped run is never mistaken for a full one).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.study.universe import DEFAULT_UNIVERSE, check_universe
from pipeline.typology.context import DEFAULT_CHARS, DEFAULT_K, h2g_context, h2j_context, h2r_context
from pipeline.typology.induction import HardQuery

TASKS = ("h2r", "h2g", "h2j")
# The configuration fields each task's own values depend on (beside the rule's and the context's)
TASK_FIELDS = {"h2r": ("retriever",), "h2g": ("generator", "encoder", "aggregate", "partial_references",
                                              "truncated_answers"),
               "h2j": ("judge", "setup", "cap")}
COMPONENT_FIELDS = frozenset(f for fields in TASK_FIELDS.values() for f in fields)


@dataclass(frozen=True)
class HardSetConfig:
    """One configuration, in the ``NAME[=FILE]`` forms of ``pipeline.study.run``, plus the context size."""
    dataset: str | None  # a registry name, or None with ``qrels`` (any TREC-style collection)
    task: str
    retriever: str = "bm25"  # NAME[=RUNFILE]
    generator: str = "embedded"  # NAME[=FILE.jsonl]
    judge: str = "llama-3.3-70b"  # NAME[=FILE]
    setup: str = "binary"
    quantile: float = 0.25
    data: str | None = None
    qrels: str | None = None
    topics: str | None = None
    passages: str | None = None
    cap: int | None = DEFAULT_CAP  # LLM judge: judged pairs per query at most
    encoder: str = "auto"
    aggregate: str = "max"
    partial_references: str = "exclude"  # H2G: queries with an incomplete reference set (pipeline.study.run)
    universe: str = DEFAULT_UNIVERSE  # over which queries each set is drawn (pipeline.study.universe)
    truncated_answers: str = "exclude"  # H2G: answers cut at the token limit (pipeline.generation.h2g)
    max_queries: int | None = None
    k: int = DEFAULT_K
    chars: int = DEFAULT_CHARS

    @property
    def tasks_needed(self) -> tuple[str, ...]:
        """The tasks whose values the set depends on: its own (``per-task``), or all three (``common``)."""
        return TASKS if check_universe(self.universe) == "common" else (self.task,)

    def describe(self) -> dict:
        """What defines the set and the contexts (part of the typology run id): the components of
        :attr:`tasks_needed` only (an H2R set under ``per-task`` is the same whatever the generator)."""
        used = {f for t in self.tasks_needed for f in TASK_FIELDS[t]}
        return {k: v for k, v in asdict(self).items() if k not in ("data", "dataset", "task", "topics", "passages")
                and (k not in COMPONENT_FIELDS or k in used)}


def _cap(qids: list[str], config: HardSetConfig) -> list[str]:
    return qids[:config.max_queries] if config.max_queries else qids


@dataclass
class TaskValues:
    """One task's per-query values, what names its component, and its queries' context."""
    values: dict[str, float]
    configuration: dict
    provenance: dict
    context: Callable[[str], str]


def _retrieval(data, config: HardSetConfig, llm_options) -> TaskValues:
    from pipeline.study.tasks.h2r import scored_run

    run, values = scored_run(data, config.retriever)
    return TaskValues(values, {"retriever": run.name}, {"retriever": run.as_dict()}, lambda q: h2r_context(
        q, run.run, data.passages, data.qrels, run.name, k=config.k, chars=config.chars))


def _generation(data, config: HardSetConfig, llm_options) -> TaskValues:
    from pipeline.generation.h2g import answer_cut_note, generation_values
    from pipeline.study.tasks.h2g import generation_for

    gen = generation_for(data, config.generator, llm_options=llm_options, progress=True,
                         partial_references=config.partial_references)
    values, info = generation_values(data, gen, config.encoder, config.aggregate, config.partial_references,
                                     config.truncated_answers)
    return TaskValues(values, {"generator": gen.name}, {"generator": {
        "provenance": gen.provenance, "bertscore": info, "prompt": gen.prompt, "options": gen.options,
        "finish_reasons": gen.finish_reasons}},
        lambda q: h2g_context(gen.answers.get(q, ""), data.relevant_passages(q), gen.name, k=config.k,
                              chars=config.chars, cut=answer_cut_note(gen.finish_reasons, gen.options, q)))


def _judgment(data, config: HardSetConfig, llm_options) -> TaskValues:
    from pipeline.judging.h2j import disagrees, judgment_values
    from pipeline.study.tasks.h2j import judgments_for

    judgments = judgments_for(data, config.judge, config.setup, cap=config.cap, llm_options=llm_options,
                              progress=True)
    values, info = judgment_values(data, judgments)
    scale = "0/1 answers to a binary prompt" if judgments.labels_binary else "0-3"

    def context(q):
        human = data.qrels.get(q, {})
        pairs = [(pid, human[pid], label, disagrees(label, human[pid], config.setup,
                                                    llm_is_binary=judgments.labels_binary))
                 for pid, label in judgments.labels.get(q, {}).items() if pid in human]
        return h2j_context(pairs, data.passages, judgments.judge, config.setup, scale, k=config.k, chars=config.chars)
    return TaskValues(values, {"judge": judgments.judge, "setup": config.setup}, {"judge": info}, context)


STEPS = {"h2r": _retrieval, "h2g": _generation, "h2j": _judgment}


def hard_queries(config: HardSetConfig, llm_options: dict | None = None) -> tuple[str, list[HardQuery], dict]:
    """``(dataset name, queries hardest first, description of the set)`` for ``config.task``, computing
    only the tasks of :attr:`HardSetConfig.tasks_needed` (module docstring)."""
    from pipeline.sets.rule import SetSummary
    from pipeline.study.config import load_collection
    from pipeline.study.conventions import CONVENTIONS
    from pipeline.study.run import combine, task_hard_set

    tasks = config.tasks_needed  # checks the universe rule before any step runs
    data = load_collection(config.dataset, qrels=config.qrels, topics=config.topics, passages=config.passages,
                           data_dir=config.data)
    parts = {task: STEPS[task](data, config, llm_options) for task in tasks}
    own = parts[config.task]
    configuration = {k: v for part in parts.values() for k, v in part.configuration.items()}
    if config.universe == "common":
        sets = combine(data.name, configuration, {t: p.values for t, p in parts.items()}, {}, config.quantile,
                       universe="common", n_judged=len(data.queries()))
        qids, set_info, universe_info = list(sets.sets[config.task]), sets.set_info[config.task], sets.universe_info
    else:
        hard = task_hard_set(own.values, config.task, config.quantile)
        qids, set_info = list(hard.qids), SetSummary.of(hard).to_dict()
        universe_info = {"rule": config.universe, "n_task": {config.task: len(own.values)}}
    kept = _cap(qids, config)
    generator_model = ((parts["h2g"].provenance["generator"]["provenance"] or {}) if "h2g" in parts else {})
    topics = data.queries()
    meta = {**config.describe(), "configuration": {**configuration, "quantile": config.quantile,
                                                   "universe": config.universe},
            "n_hard": len(qids), "n_used": len(kept),
            # the model behind the generator spec ("auto" may resolve to the embedded one): H2G reasons explain
            # its answers, and the pages say so
            "generator_model": {k: generator_model.get(k) for k in ("backend", "model", "label")},
            "capped": len(kept) < len(qids), "universe_info": universe_info,
            "set": set_info,  # threshold, target, tie block, |set|/N, tie warning
            "rule": CONVENTIONS[config.task]}
    return data.name, [HardQuery(q, topics.get(q, ""), own.context(q)) for q in kept], meta
