"""Hard to judge (H2J): where an LLM judge and the NIST grades disagree, per pair (:func:`disagrees`) and
per query (:func:`disagreement`, the share of a query's labelled pairs that disagree).

Two setups, both compared with the NIST grades (0 irrelevant, 1 related, 2 highly, 3 perfectly):

- ``binary``: grades 0-1 are "not relevant", 2-3 "relevant"; a pair *disagrees* when the LLM and
  NIST fall on different sides of that cut. An LLM judge asked in this setup answers 0 (not
  relevant) or 1 (relevant, i.e. what NIST would grade 2-3); an imported graded judge is cut at 2.
- ``graded``: the LLM gives 0-3 (an UMBRELA-style prompt); a pair disagrees when |LLM - NIST| > 1.

A query's disagreement is the share of its judged pairs that disagree, over the pairs that have a
valid LLM label. H2J is the top quantile of the disagreements under ``pipeline.sets.rule.hard_set``'s rule
(the hardest floor((n-1)q)+1 queries, a tie block at the boundary kept whole, in or out by the size
closer to that target): a capped judge's shares take few values, and ties must not inflate the set.
"""
from __future__ import annotations

from fractions import Fraction

from typing import Mapping

from pipeline.data.datasets import RELEVANT_GRADE
from pipeline.judging.judgments import Judgments


def disagrees(llm: int, human: int, setup: str, *, llm_is_binary: bool) -> bool:
    """Whether one pair disagrees under ``setup`` (see the module docstring)."""
    if setup == "binary":
        llm_relevant = llm >= 1 if llm_is_binary else llm >= RELEVANT_GRADE
        return llm_relevant != (human >= RELEVANT_GRADE)
    return abs(llm - human) > 1


def disagreement(judgments: Judgments, qrels: Mapping[str, Mapping[str, int]],
                 queries=None, *, exact: bool = False) -> tuple[dict[str, float], dict]:
    """``({qid: share of disagreeing pairs}, counts)`` over the pairs both NIST and the judge labelled.

    Queries (of ``queries``, default all judged ones) with no such pair are left out and counted. ``exact``:
    each share as a :class:`fractions.Fraction` (disagreeing pairs out of labelled pairs), for paired tests
    whose ties must be exact (:mod:`core.inference.paired`).
    """
    queries = list(queries if queries is not None else qrels)
    values: dict[str, float] = {}
    n_pairs, no_pairs, missing = 0, [], 0
    for qid in queries:
        human = qrels.get(qid, {})
        labelled = judgments.labels.get(qid, {})
        shared = [pid for pid in labelled if pid in human]
        missing += sum(1 for pid in human if pid not in labelled)
        if not shared:
            no_pairs.append(qid)
            continue
        n_dis = sum(disagrees(labelled[p], human[p], judgments.setup, llm_is_binary=judgments.labels_binary)
                    for p in shared)
        values[qid] = Fraction(n_dis, len(shared)) if exact else n_dis / len(shared)
        n_pairs += len(shared)
    counts = {"n_pairs_compared": n_pairs, "n_queries": len(values), "queries_without_pairs": no_pairs,
              "n_judged_pairs_not_labelled": missing, "n_unparseable": judgments.n_unparseable,
              "n_failed": judgments.n_failed, "cap": judgments.cap}
    return values, counts


def judgment_values(data, judgments) -> tuple[dict[str, float], dict]:
    values, counts = disagreement(judgments, data.require_qrels(), data.queries())
    return values, {**counts, "provenance": judgments.provenance, "source": judgments.source}
