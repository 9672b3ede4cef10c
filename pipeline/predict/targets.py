"""The targets a predictor is evaluated against: each task's per-query values on one dataset with their
direction and hard set, as the study computes them (nDCG@10 per retriever, BERTScore F1 per generator,
disagreement per judge and setup), over each task's own scored queries.

Each builder returns the :class:`pipeline.predict.evaluation.Target` and what the predictors read from
the same component (the run; the answers; the judgments), so a component is resolved once. The values
are the study's :class:`pipeline.study.task.PerQueryValues` (direction, hard-set rule, provenance).
"""
from __future__ import annotations

from pipeline.predict.evaluation import Target
from pipeline.study.task import EASIER, HARDER, PerQueryValues


def target_from(values: PerQueryValues, quantile: float) -> Target:
    """The evaluation's view of a task's values: named ``MEASURE[SYSTEM]`` (``MEASURE[JUDGE (SETUP)]``),
    its direction, and its hard set by the study's rule at the end the task says is hard."""
    hard = values.hard_set(quantile).qids if values.values else ()
    return Target(f"{values.measure}[{values.label}]", values.task, values.dataset, dict(values.values),
                  values.higher_is == EASIER, frozenset(hard), values.provenance)


def retrieval_target(data, arg: str, quantile: float):
    """``(Target nDCG@10[NAME], RetrieverRun)`` of retriever ``arg`` (``NAME[=RUNFILE]``)."""
    from pipeline.study.tasks.h2r import RetrievalTask, scored_run

    run, per_query = scored_run(data, arg)
    values = PerQueryValues("h2r", data.name, run.name, RetrievalTask.measure, RetrievalTask.higher_is, per_query,
                            convention=RetrievalTask.convention, provenance=run.as_dict())
    return target_from(values, quantile), run


def judge_target(data, arg: str, setup: str, quantile: float, *, cap=None, llm_options=None, progress=False):
    """``(Target disagreement[JUDGE (SETUP)], Judgments)`` of judge ``arg`` (cached LLM calls, or a file)."""
    from pipeline.judging.h2j import judgment_values
    from pipeline.study.tasks.h2j import judgments_for

    judgments = judgments_for(data, arg, setup, cap=cap, llm_options=llm_options, progress=progress)
    per_query, info = judgment_values(data, judgments)
    info = {k: v for k, v in info.items() if k != "queries_without_pairs"}
    values = PerQueryValues("h2j", data.name, judgments.judge, "disagreement", HARDER, per_query, provenance=info,
                            setup=setup)
    return target_from(values, quantile), judgments


def generation_target(data, arg: str, quantile: float, *, bertscore: dict | None = None, llm_options=None,
                      progress=False):
    """``(Target BERTScore F1[GENERATOR], Generation)`` of generator ``arg`` (stored answers are reused);
    ``bertscore``: ``generation_values``' encoder, aggregate, partial_references and truncated."""
    from pipeline.generation.h2g import generation_values
    from pipeline.study.tasks.h2g import generation_for

    bertscore = bertscore or {}
    generation = generation_for(data, arg, llm_options=llm_options, progress=progress,
                                partial_references=bertscore.get("partial_references", "exclude"))
    per_query, info = generation_values(data, generation, **bertscore)
    keep = ("encoder", "label", "aggregate", "n_answered", "n_excluded", "partial_references")
    provenance = {"generator": generation.provenance, **{k: info[k] for k in keep if k in info}}
    values = PerQueryValues("h2g", data.name, generation.name, "BERTScore F1", EASIER, per_query,
                            provenance=provenance, model=generation.provenance)
    return target_from(values, quantile), generation
