"""The hard queries of one task under one configuration, with their task context, for a typology run.

The hard sets come from the failure pipeline (``pipeline.study.run.failure_sets``: the three sets of one
configuration within the queries all three tasks score, under its universe rule); this module picks one
task's set and renders
each query's context
(``pipeline.typology.context``). ``max_queries`` keeps the hardest ``N`` (the cap is recorded in the
run's ``hard_set`` description, so a capped run is never mistaken for a full one).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.study.universe import DEFAULT_UNIVERSE
from pipeline.typology.context import DEFAULT_CHARS, DEFAULT_K, h2g_context, h2j_context, h2r_context
from pipeline.typology.induction import HardQuery


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
    max_queries: int | None = None
    k: int = DEFAULT_K
    chars: int = DEFAULT_CHARS

    def describe(self) -> dict:
        """What defines the set and the contexts (part of the typology run id). Every component
        counts, not only the task's own: the sets are computed over the queries all three score."""
        return {k: v for k, v in asdict(self).items() if k not in ("data", "dataset", "task", "topics", "passages")}


def _cap(qids: list[str], config: HardSetConfig) -> list[str]:
    return qids[:config.max_queries] if config.max_queries else qids


def hard_queries(config: HardSetConfig, llm_options: dict | None = None) -> tuple[str, list[HardQuery], dict]:
    """``(dataset name, queries hardest first, description of the set)`` for ``config.task``.

    The set is the task's set of the configuration's three sets (``pipeline.study.run.failure_sets``:
    computed over the queries all three tasks score, as in the overlap analysis), so a typology
    explains exactly the queries the Venn diagram shows.
    """
    from pipeline.study.run import failure_sets, judgments_for, load_collection
    from pipeline.retrieval.retrievers import get_run, parse_named_arg

    collection = {"qrels": config.qrels, "topics": config.topics, "passages": config.passages,
                  "data_dir": config.data}
    sets = failure_sets(config.dataset, retriever=config.retriever, generator=config.generator, judge=config.judge,
                        setup=config.setup, quantile=config.quantile, encoder=config.encoder,
                        aggregate=config.aggregate, cap=config.cap, llm_options=llm_options, progress=True,
                        partial_references=config.partial_references, universe=config.universe,
                        **collection)
    data = load_collection(config.dataset, **collection)
    topics = data.queries()
    qids = list(sets.sets[config.task])
    if config.task == "h2r":
        name, path = parse_named_arg(config.retriever, "--retriever")
        retriever = get_run(data, name, path)
        run = retriever.run

        def context(q):
            return h2r_context(q, run, data.passages, data.qrels, retriever.name, k=config.k, chars=config.chars)
    elif config.task == "h2g":
        generator = sets.configuration["generator"]

        def context(q):
            return h2g_context(sets.answers.get(q, ""), data.relevant_passages(q), generator, k=config.k,
                               chars=config.chars)
    else:
        from pipeline.judging.h2j import disagrees

        judgments = judgments_for(data, config.judge, config.setup, cap=config.cap, llm_options=llm_options,
                                  progress=False)
        scale = "0/1 answers to a binary prompt" if judgments.labels_binary else "0-3"

        def context(q):
            human = data.qrels.get(q, {})
            pairs = [(pid, human[pid], label, disagrees(label, human[pid], config.setup,
                                                        llm_is_binary=judgments.labels_binary))
                     for pid, label in judgments.labels.get(q, {}).items() if pid in human]
            return h2j_context(pairs, data.passages, judgments.judge, config.setup, scale, k=config.k,
                               chars=config.chars)
    kept = _cap(qids, config)
    generator_model = (sets.provenance.get("generator") or {}).get("provenance") or {}
    meta = {**config.describe(), "configuration": sets.configuration, "n_hard": len(qids), "n_used": len(kept),
            # the model behind the generator spec ("auto" may resolve to the embedded one): H2G reasons explain
            # its answers, and the pages say so
            "generator_model": {k: generator_model.get(k) for k in ("backend", "model", "label")},
            "capped": len(kept) < len(qids), "universe": len(sets.universe),
            "set": sets.set_info.get(config.task),  # threshold, target, tie block, |set|/N, tie warning
            "rule": sets.provenance.get("conventions", {}).get(config.task, "")}
    return sets.dataset, [HardQuery(q, topics.get(q, ""), context(q)) for q in kept], meta
