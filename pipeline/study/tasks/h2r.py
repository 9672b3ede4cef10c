"""H2R as a failure task: each retriever's per-query nDCG@10 over the dataset's judged queries (a judged
query missing from the run scores 0, as ``trec_eval -c``), lower is harder (:class:`RetrievalTask`).

A retriever is ``NAME=RUNFILE`` (an imported run), or ``NAME``: the data folder's
``runs/run.NAME.<dataset>.txt``, else computed here over the folder's passages and named
``NAME@computed`` (:func:`pipeline.retrieval.retrievers.get_run`).
"""
from __future__ import annotations

from typing import Iterator, Sequence

from pipeline.study.components import parse_component
from pipeline.study.conventions import MEASURE
from pipeline.study.result import RetrieverResult
from pipeline.study.task import EASIER, FailureTask, PerQueryValues, StepContext, not_scored
from pipeline.sets.rule import SetSummary


def scored_run(data, arg: str, measure: str = MEASURE, **compute):
    """``(the RetrieverRun retriever arg names, its per-query measure)``; ``compute``: the settings of a
    run computed here (depth, k1, b, threads)."""
    from pipeline.retrieval import evaluation
    from pipeline.retrieval.retrievers import get_run

    name, file = parse_component(arg, "--retriever")
    run = get_run(data, name, file, **compute)
    return run, evaluation.per_query(data.require_qrels(), run.run, measure, complete=True)


def retrieval_values(data, arg: str) -> tuple[str, dict[str, float], dict]:
    """``(name, per-query nDCG@10, the run's description)``; the name is ``NAME@computed`` for a
    partial-corpus run."""
    run, values = scored_run(data, arg)
    return run.name, values, run.as_dict()


class RetrievalTask(FailureTask, name="h2r", role="retriever", section="retrievers", measure=MEASURE,
                    higher_is=EASIER):
    """H2R (module docstring); the study file's ``retrievers`` hold each :class:`RetrieverResult`."""

    def records(self, config, data, context: StepContext) -> Iterator[tuple[str, None, RetrieverResult]]:
        for arg in self.components(config):
            context.tracker.stage(f"retriever {arg}")
            name, values, info = retrieval_values(data, arg)
            hard = self.hard_set(values, config.quantile)
            context.log(f"[{data.name}] retriever {name}: {len(values)} queries")
            yield name, None, RetrieverResult(info, values, list(hard.qids), SetSummary.of(hard))

    def values_of(self, dataset: str, system: str, record: RetrieverResult, judged: Sequence[str],
                  setup: str | None = None) -> PerQueryValues:
        return self.per_query_values(dataset, system, record.per_query,
                                     not_scored(judged, record.per_query, {}, f"no {self.measure} value"), record.info,
                                     record=record)

