"""Per-query effectiveness through ir_measures (pytrec_eval underneath: trec_eval's conventions).

trec_eval conventions that matter here: passages are ranked by score, ties broken by passage id;
nDCG uses the graded label as the gain (linear gain, log2 discount); queries without judgments are
ignored. By default only queries that are both judged and in the run are scored (``trec_eval``);
``complete=True`` scores judged queries missing from the run as 0 (``trec_eval -c``), which is what
per-retriever comparisons over one query set need.

Measures are ir_measures names: ``nDCG@10``, ``RR(rel=2)@10``, ``AP(rel=2)``, ``R(rel=2)@1000`` ...
(TREC DL counts grades >= 2 as relevant for binary measures, hence ``rel=2``).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import ir_measures
import numpy as np

from pipeline.data import trec_io
from pipeline.data.trec_io import Qrels, Run

DEFAULT_MEASURE = "nDCG@10"


def parse_measure(name: str):
    try:
        return ir_measures.parse_measure(name)
    except Exception:
        raise ValueError(f"unknown measure {name!r} (ir_measures syntax, e.g. nDCG@10, RR(rel=2)@10, AP(rel=2))") from None


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
             measures: Sequence[str] = (DEFAULT_MEASURE,), *, complete: bool = False) -> dict[str, dict[str, float]]:
    """``{measure: {qid: value}}`` for every requested measure."""
    parsed = {name: parse_measure(name) for name in measures}
    by_measure = {m: name for name, m in parsed.items()}
    out: dict[str, dict[str, float]] = {name: {} for name in measures}
    # empty rankings are dropped: pytrec_eval rejects them, and trec_eval never sees such a query
    run = {qid: dict(ranked) for qid, ranked in run.items() if ranked}
    qrels = {qid: dict(judged) for qid, judged in qrels.items()}
    for metric in ir_measures.iter_calc(list(parsed.values()), qrels, run):
        out[by_measure[metric.measure]][metric.query_id] = float(metric.value)
    # pytrec_eval_terrier scores judged queries missing from the run as 0 while other providers
    # skip them: make both conventions explicit whichever provider ir_measures picked
    for name, values in out.items():
        if complete:
            for qid in qrels:
                values.setdefault(qid, 0.0)
        else:
            out[name] = {qid: v for qid, v in values.items() if qid in run}
    return out


def per_query(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
              measure: str = DEFAULT_MEASURE, *, complete: bool = False) -> dict[str, float]:
    """``{qid: value}`` of one measure (see the module docstring for which queries are scored)."""
    return evaluate(qrels, run, (measure,), complete=complete)[measure]


def mean(values: Mapping[str, float]) -> float:
    if not values:
        raise ValueError("no scored queries to average")
    return float(np.mean(list(values.values())))


def check_run_matches_qrels(qrels: Qrels, run: Run, run_path: str, qrels_path: str,
                            min_fraction: float = 0.5) -> None:
    """Refuse a run that covers less than ``min_fraction`` of the judged queries.

    That is almost always a run for another year (DL19 and DL20 topics are disjoint), and its
    "mean" would silently average a handful of accidental matches.
    """
    covered = sum(qid in run for qid in qrels)
    if covered < min_fraction * len(qrels):
        raise ValueError(f"{run_path}: has results for only {covered} of the {len(qrels)} judged queries in "
                         f"{qrels_path}; is it a run for another dataset? (--allow-partial to score it anyway)")


def evaluate_run_file(qrels_path, run_path, measure: str = DEFAULT_MEASURE, *, complete: bool = False,
                      allow_partial: bool = False) -> dict:
    """``{"per_query": {qid: value}, "mean": value}`` of a TREC run file against a qrels file; a run
    covering under half the judged queries is refused unless ``allow_partial``
    (:func:`check_run_matches_qrels`)."""
    qrels = trec_io.read_qrels(qrels_path)
    run = trec_io.read_run(run_path)
    if not allow_partial:
        check_run_matches_qrels(qrels, run, run_path, qrels_path)
    values = per_query(qrels, run, measure, complete=complete)
    return {"per_query": values, "mean": mean(values)}
