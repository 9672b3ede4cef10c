"""Validation figures for LLM-assigned failure reasons, computed from annotation CSV rows only.

Each row is one binary decision on a (dataset, task, qid, category): the LLM assigned the category
(``llm_assigned``) or not, and the annotator says it applies (``human_applicable``: an assigned
reason marked correct, or a category the annotator added) or not. A category belongs to its task,
so per-category figures are keyed ``"task: category"``.

* **LLM vs an annotator**: over that annotator's decisions, with the human answer as the truth,
  accuracy = (TP + TN) / n, precision = TP / (TP + FP), recall = TP / (TP + FN); pooled over all
  decisions for "overall" (micro average).
* **LLM vs the union**: a decision applies when *any* annotator who made it says so; over every
  decision at least one annotator made. All annotators must agree on ``llm_assigned`` for a decision
  (they saw the same LLM output); rows that disagree are an error, not averaged away.
* **Cohen's κ** between each pair of annotators, over the decisions both made:
  κ = (p_o − p_e) / (1 − p_e) (``sklearn.metrics.cohen_kappa_score``). κ is *undefined* when
  p_e = 1 -- both annotators gave one and the same answer to every decision (e.g. a category nobody
  used) -- and is then reported as ``None`` with the reason, never as 0 or 1.

Every figure carries its counts: the decisions (n_decisions) and distinct queries (n_queries)
behind it, and the confusion counts. A ratio whose denominator is 0 is ``None`` with a reason.
"""
from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Iterable

import numpy as np
from sklearn.metrics import cohen_kappa_score

OVERALL = "overall"
KAPPA_UNDEFINED = "undefined: both annotators gave the same answer to every decision (expected agreement 1)"


def _ratio(num: int, den: int, what: str):
    return (num / den, None) if den else (None, f"undefined: no {what}")


def confusion_figures(pairs: Iterable[tuple[tuple, int, int]]) -> dict:
    """Figures for ``(query_key, llm, human)`` triples."""
    pairs = list(pairs)
    tp = sum(1 for _, l, h in pairs if l and h)
    fp = sum(1 for _, l, h in pairs if l and not h)
    fn = sum(1 for _, l, h in pairs if not l and h)
    tn = len(pairs) - tp - fp - fn
    out = {"n_decisions": len(pairs), "n_queries": len({q for q, _, _ in pairs}),
           "tp": tp, "fp": fp, "fn": fn, "tn": tn, "undefined": {}}
    for name, num, den, what in (("accuracy", tp + tn, len(pairs), "decisions"),
                                 ("precision", tp, tp + fp, "LLM-assigned reasons"),
                                 ("recall", tp, tp + fn, "reasons the humans found applicable")):
        out[name], why = _ratio(num, den, what)
        if why:
            out["undefined"][name] = why
    return out


def kappa_figures(pairs: list[tuple[tuple, int, int]]) -> dict:
    """Cohen's κ for ``(query_key, answer_a, answer_b)`` triples (see the module rule)."""
    a = np.array([x for _, x, _ in pairs], dtype=int)
    b = np.array([y for _, _, y in pairs], dtype=int)
    out = {"n_decisions": len(pairs), "n_queries": len({q for q, _, _ in pairs}),
           "agreement": float((a == b).mean()) if len(pairs) else None,
           "both_yes": int(((a == 1) & (b == 1)).sum()), "both_no": int(((a == 0) & (b == 0)).sum()),
           "only_first": int(((a == 1) & (b == 0)).sum()), "only_second": int(((a == 0) & (b == 1)).sum())}
    if not pairs:
        return {**out, "kappa": None, "undefined": "undefined: no decision made by both annotators"}
    p_e = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    if p_e >= 1.0:
        return {**out, "kappa": None, "undefined": KAPPA_UNDEFINED}
    return {**out, "kappa": float(cohen_kappa_score(a, b)), "undefined": None}


def _by_category(triples: list[tuple[str, tuple, int, int]], figures) -> dict:
    groups = defaultdict(list)
    for category, *rest in triples:
        groups[category].append(tuple(rest))
    return {OVERALL: figures([tuple(t[1:]) for t in triples]),
            "per_category": {c: figures(groups[c]) for c in sorted(groups)}}


def report(rows: Iterable[dict]) -> dict:
    """All figures from CSV rows (dicts with the CSV columns; 0/1 as ints or strings)."""
    decisions: dict[str, dict[tuple, tuple[int, int]]] = defaultdict(dict)
    llm_of: dict[tuple, int] = {}
    n_rows = 0
    for row in rows:
        n_rows += 1
        key = (row["dataset"], row["task"], row["qid"], row["category"])
        llm, human = int(row["llm_assigned"]), int(row["human_applicable"])
        if llm_of.setdefault(key, llm) != llm:
            raise ValueError(f"annotators disagree on whether the LLM assigned {key[3]!r} to {key[0]} {key[1]} "
                             f"{key[2]}: rows from different typology runs cannot be compared")
        decisions[row["annotator"]][key] = (llm, human)

    def triple(key, *values):  # (category label, query key, v1, v2)
        return (f"{key[1]}: {key[3]}", key[:3], *values)

    annotators = sorted(decisions)
    per_annotator = {a: _by_category([triple(k, l, h) for k, (l, h) in sorted(d.items())], confusion_figures)
                     for a, d in decisions.items()}
    union = {}
    for d in decisions.values():
        for key, (llm, human) in d.items():
            union[key] = (llm, max(human, union.get(key, (llm, 0))[1]))
    kappa = {}
    for first, second in combinations(annotators, 2):
        common = sorted(decisions[first].keys() & decisions[second].keys())
        kappa[f"{first} | {second}"] = _by_category(
            [triple(k, decisions[first][k][1], decisions[second][k][1]) for k in common], kappa_figures)
    return {"n_rows": n_rows, "annotators": annotators,
            "categories": sorted({f"{k[1]}: {k[3]}" for k in llm_of}),
            "llm_vs_annotator": per_annotator,
            "llm_vs_union": _by_category([triple(k, l, h) for k, (l, h) in sorted(union.items())], confusion_figures),
            "kappa": kappa,
            "conventions": {"union": "a decision applies when any annotator who made it says so",
                            "overall": "pooled over all decisions (micro average)",
                            "kappa": "Cohen's kappa over the decisions both annotators made; undefined when "
                                     "expected agreement is 1"}}
