"""The hard queries of one task under one configuration, with their task context, for a typology run.

The hard sets come from the failure pipeline (H2R: ``pipeline.h2r``; H2G and H2J: the overlap
analysis of issue 8); this module only picks one task's set and renders each query's context
(``pipeline.typology.context``). ``max_queries`` keeps the hardest ``N`` (the cap is recorded in the
run's ``hard_set`` description, so a capped run is never mistaken for a full one).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from pipeline.typology.context import DEFAULT_CHARS, DEFAULT_K, h2g_context, h2j_context, h2r_context
from pipeline.typology.induction import HardQuery


@dataclass(frozen=True)
class HardSetConfig:
    dataset: str
    task: str
    retriever: str = "bm25"  # NAME[=RUNFILE]
    generator: str = "embedded"  # NAME[=FILE.jsonl]
    judge: str = "llama-3.3-70b"  # NAME[=FILE]
    setup: str = "binary"
    quantile: float = 0.25
    data: str | None = None
    max_queries: int | None = None
    k: int = DEFAULT_K
    chars: int = DEFAULT_CHARS

    def describe(self) -> dict:
        """What defines the set (part of the typology run id); the data folder is left out."""
        out = {k: v for k, v in asdict(self).items() if k not in ("data", "dataset", "task")}
        keep = {"h2r": ("retriever",), "h2g": ("generator",), "h2j": ("judge", "setup")}[self.task]
        return {k: v for k, v in out.items() if k not in {"retriever", "generator", "judge", "setup"} - set(keep)}


def _cap(qids: list[str], config: HardSetConfig) -> list[str]:
    return qids[:config.max_queries] if config.max_queries else qids


def hard_queries(config: HardSetConfig) -> tuple[list[HardQuery], dict]:
    """``(queries hardest first, description of the set)`` for ``config.task``."""
    from pipeline.datasets import load_dataset

    data = load_dataset(config.dataset, config.data)
    data.require_qrels()
    topics = data.queries()
    if config.task == "h2r":
        qids, meta, context = _h2r(data, config)
    else:
        raise ValueError(f"task {config.task} needs the H2G/H2J sets of the overlap analysis (issue 8)")
    kept = _cap(qids, config)
    meta = {**config.describe(), **meta, "n_hard": len(qids), "n_used": len(kept),
            "capped": len(kept) < len(qids)}
    return [HardQuery(q, topics.get(q, ""), context(q)) for q in kept], meta


def _h2r(data, config: HardSetConfig):
    from pipeline.evaluation import per_query
    from pipeline.h2r import hard_to_retrieve
    from pipeline.retrievers import get_run, parse_retriever_arg

    name, path = parse_retriever_arg(config.retriever)
    run = get_run(data, name, path)
    hard = hard_to_retrieve(per_query(data.qrels, run.run, complete=True), config.quantile, name)
    meta = {"rule": "NDCG@10 <= quantile (ties included)", "threshold": hard.threshold,
            "provenance": run.provenance}
    return list(hard.qids), meta, lambda q: h2r_context(q, run.run, data.passages, data.qrels, name,
                                                       k=config.k, chars=config.chars)
