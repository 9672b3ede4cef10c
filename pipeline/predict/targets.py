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

DEFAULT_TARGET_MEASURE = "nDCG@10"  # the study's H2R measure


def model_gate(provenance) -> str:
    """Why an output of the model ``provenance`` (a stored :class:`pipeline.llm.base.Provenance` record)
    carries no verdict: sub-1B or of unknown size (:attr:`Provenance.evidence_gate`); "" when it may."""
    from pipeline.llm.base import Provenance

    return Provenance.from_dict(provenance).evidence_gate if provenance else ""


def target_from(values: PerQueryValues, quantile: float, gate: str = "") -> Target:
    """The evaluation's view of a task's values: named ``MEASURE[SYSTEM]`` (``MEASURE[JUDGE (SETUP)]``),
    its direction, and its hard set by the study's rule at the end the task says is hard (``gate``: why
    no verdict may rest on it, :func:`model_gate`)."""
    hard = values.hard_set(quantile).qids if values.values else ()
    return Target(f"{values.measure}[{values.label}]", values.task, values.dataset, dict(values.values),
                  values.higher_is == EASIER, frozenset(hard), values.provenance, gate)


# TREC DL's convention for its binary measures (grades 0-3): a passage graded 2 (highly relevant) or 3
# (perfectly relevant) is relevant (the track overviews, Craswell et al. 2019-2022)
TREC_DL_REL = 2
IR_MEASURES_REL = 1  # ir_measures' own default


def default_relevance(data) -> int:
    """The relevance level a binary measure named without one gets on ``data``: TREC DL's 2 for a TREC DL
    year (``dl19`` ... ``dl22``), ir_measures' 1 for any other collection."""
    from pipeline.data.datasets import DATASETS

    return TREC_DL_REL if getattr(data, "name", None) in DATASETS else IR_MEASURES_REL


def measure_label(measure: str, default_rel: int = IR_MEASURES_REL) -> tuple[str, str]:
    """``(name, relevance)`` of an ir_measures measure: the name states the relevance level of a binary
    measure, ``default_rel`` when the measure names none (``AP@100`` -> ``AP(rel=2)@100`` on TREC DL,
    :func:`default_relevance`); the name is what is evaluated. ``relevance`` says in words what counts
    (``grade >= 2``, or the graded gains of nDCG). A measure ir_measures cannot parse is a ``ValueError``
    naming it."""
    from pipeline.retrieval.evaluation import parse_measure

    parsed = parse_measure(measure)
    if "rel" in parsed.SUPPORTED_PARAMS:
        rel = parsed.params.get("rel", default_rel)
        params = {k: v for k, v in parsed.params.items() if k != "cutoff"} | {"rel": rel}
        inner = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
        cutoff = f"@{parsed.params['cutoff']}" if "cutoff" in parsed.params else ""
        return f"{parsed.NAME}({inner}){cutoff}", f"binary: grade >= {rel} is relevant"
    return str(parsed), "graded: the qrels' grades as gains"


def retrieval_targets(data, arg: str, quantile: float, measures=(DEFAULT_TARGET_MEASURE,)):
    """``([Target MEASURE[NAME] per measure], RetrieverRun)`` of retriever ``arg`` (``NAME[=RUNFILE]``):
    each ir_measures measure of ``measures`` per query (judged queries missing from the run score 0)."""
    from pipeline.retrieval import evaluation
    from pipeline.retrieval.retrievers import get_run
    from pipeline.study.tasks.h2r import RetrievalTask
    from pipeline.study.components import parse_component

    labels = {m: measure_label(m, default_relevance(data)) for m in measures}  # an unknown one refused first
    name, file = parse_component(arg, "--retriever")
    run = get_run(data, name, file)
    unique = list(dict.fromkeys(labels.values()))  # AP@100 and AP(rel=2)@100 are one target on TREC DL
    scored = evaluation.evaluate(data.require_qrels(), run.run, [label for label, _ in unique], complete=True)
    out = []
    for label, relevance in unique:
        values = PerQueryValues("h2r", data.name, run.name, label, RetrievalTask.higher_is, scored[label],
                                convention=(RetrievalTask.convention if label == DEFAULT_TARGET_MEASURE else
                                            f"lowest {label} ({relevance}; ir_measures, judged queries missing "
                                            f"from a run score 0), the study's quantile rule"),
                                provenance={**run.as_dict(), "measure": label, "relevance": relevance})
        out.append(target_from(values, quantile))
    return out, run


def retrieval_target(data, arg: str, quantile: float):
    """``(Target nDCG@10[NAME], RetrieverRun)`` of retriever ``arg`` (``NAME[=RUNFILE]``)."""
    found, run = retrieval_targets(data, arg, quantile)
    return found[0], run


def judge_target(data, arg: str, setup: str, quantile: float, *, cap=None, llm_options=None, progress=False):
    """``(Target disagreement[JUDGE (SETUP)], Judgments)`` of judge ``arg`` (cached LLM calls, or a file)."""
    from pipeline.judging.h2j import judgment_values
    from pipeline.study.tasks.h2j import judgments_for

    judgments = judgments_for(data, arg, setup, cap=cap, llm_options=llm_options, progress=progress)
    per_query, info = judgment_values(data, judgments)
    info = {k: v for k, v in info.items() if k != "queries_without_pairs"}
    values = PerQueryValues("h2j", data.name, judgments.judge, "disagreement", HARDER, per_query, provenance=info,
                            setup=setup)
    return target_from(values, quantile, model_gate(judgments.provenance)), judgments


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
    return target_from(values, quantile, model_gate(generation.provenance)), generation
