"""H2R as a failure task: each retriever's per-query nDCG@10 over the dataset's judged queries (a judged
query missing from the run scores 0, as ``trec_eval -c``), lower is harder (:class:`RetrievalTask`).

A retriever is ``NAME=RUNFILE`` (an imported run), or ``NAME``: the data folder's
``runs/run.NAME.<dataset>.txt``, else computed here over the folder's passages and named
``NAME@computed`` (:func:`pipeline.retrieval.retrievers.get_run`).
"""
from __future__ import annotations

from typing import Sequence

from pipeline.study.components import parse_component
from pipeline.study.conventions import CONVENTIONS, MEASURE
from pipeline.study.result import RetrieverResult
from pipeline.study.task import EASIER, FailureTask, PerQueryValues, StepContext, TaskResult, not_scored
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


class RetrievalTask(FailureTask):
    """H2R (module docstring); the study file's ``retrievers`` hold each :class:`RetrieverResult`."""
    name = "h2r"
    role = "retriever"
    section = "retrievers"
    measure = MEASURE
    higher_is = EASIER
    convention = CONVENTIONS["h2r"]

    def run(self, config, context: StepContext | None = None) -> TaskResult:
        context = context or StepContext()
        data = config.data()
        judged = list(data.queries())
        out = []
        for arg in self.components(config):
            context.tracker.stage(f"retriever {arg}")
            name, values, info = retrieval_values(data, arg)
            hard = self.hard_set(values, config.quantile)
            record = RetrieverResult(info, values, list(hard.qids), SetSummary.of(hard))
            out.append(self.values_of(data.name, name, record, judged))
            context.log(f"[{data.name}] retriever {name}: {len(values)} queries")
        return self.result(data.name, config.quantile, out)

    def values_of(self, dataset: str, system: str, record: RetrieverResult, judged: Sequence[str],
                  setup: str | None = None) -> PerQueryValues:
        return PerQueryValues(self.name, dataset, system, self.measure, self.higher_is, record.per_query,
                              not_scored(judged, record.per_query, {}, f"no {self.measure} value"),
                              self.convention, record.info, record=record)

