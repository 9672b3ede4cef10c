"""Validation figures for LLM-assigned failure reasons, computed from annotation CSV rows only.

Each row is one binary decision on a (typology run, dataset, task, qid, category): the LLM assigned
the category (``llm_assigned``) or not, and the annotator says it applies (``human_applicable``: an
assigned reason marked correct, or a category the annotator added) or not. A category belongs to its
task, so per-category figures are keyed ``"task: category"``.

Whose reasons: figures of the LLM are computed per ``model`` (the model that assigned the reasons;
rows of one model may span several typology runs, one per task), never pooled across models.

What is left out: rows whose ``llm_answer`` is ``unreadable`` (the model's assignment could not be
read, so "not assigned" would be a guess), ``unknown_category`` (the answer named categories outside
the typology, which may stand for any of its categories, so "not assigned" says nothing either) or
``unknown`` (from before readability was recorded, on a query with no assigned reason) are excluded
from every figure -- the LLM figures and κ -- and counted under ``excluded``, each apart. They are
never true negatives.

Definitions (also in ``report(...)["definitions"]``, which the CLI and the Validation tab print):

* ``cell_accuracy`` = (TP + TN) / cells, over every (query, category) cell; a category nobody
  assigned or tagged is a true negative. With ten categories and one or two assigned per query, most
  cells are such negatives, so this figure is high whatever the reasons' quality: it is reported under
  its name, never as "accuracy".
* ``precision`` = TP / (TP + FP): the share of the LLM-assigned reasons the annotator judged correct.
* ``recall`` = TP / (TP + FN): of the reasons the annotator found applicable (assigned reasons judged
  correct plus the reasons they added), the share the LLM assigned; every added reason is a miss
  (``added`` = FN).
* ``exact_agreement`` = share of queries whose LLM-assigned set equals the annotator's applicable set.
* **Answered cells**: the rows are the store's answered cells
  (:data:`pipeline.annotation.store.ANSWERED_CELLS`): a complete query with every cell, a partial one
  (an assigned reason still unmarked) with only the cells answered so far, so its untouched categories
  are never true negatives; its exact agreement is over those cells.
* **LLM vs the union**: a decision applies when *any* annotator who made it says so; over every
  decision at least one annotator made. All annotators must agree on ``llm_assigned`` for a decision
  (they saw the same run's output); rows that disagree are an error, not averaged away.
* **Cohen's κ** between each pair of annotators, over the decisions both made:
  κ = (p_o − p_e) / (1 − p_e) (:func:`pipeline.stats.agreement.cohen_kappa`, the pipeline's one kappa), with the
  2×2 counts. κ is *undefined* when p_e = 1 -- both annotators gave one and the same answer to every
  decision (e.g. a category nobody used) -- and is then reported as ``None`` with the reason, never as 0 or 1.

Every figure carries its counts: the decisions (n_decisions) and distinct queries (n_queries)
behind it, and the confusion counts. A ratio whose denominator is 0 is ``None`` with a reason.
"""
from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Iterable

import numpy as np

from pipeline.stats.agreement import KAPPA_UNDEFINED, cohen_kappa

OVERALL = "overall"
EXCLUDED_ANSWERS = ("unreadable", "unknown_category", "unknown")
EXCLUDED_WORDS = {"unreadable": "an unreadable assignment",
                  "unknown_category": "an assignment naming categories outside the typology",
                  "unknown": "an assignment not recorded (old store or CSV)"}
DEFINITIONS = {
    "cell_accuracy": "(TP + TN) / cells over every (query, category) cell; an untagged category counts as a true "
                     "negative, so most cells are negatives and this figure is high whatever the reasons' quality",
    "precision": "TP / (TP + FP): share of the LLM-assigned reasons the annotator judged correct",
    "recall": "TP / (TP + FN): of the reasons the annotator found applicable (judged correct or added), the share "
              "the LLM assigned; each reason the annotator added is a miss (added = FN)",
    "exact_agreement": "share of queries whose LLM-assigned set equals the annotator's applicable set (over the "
                       "cells answered)",
    "answered": "a complete query counts every cell; a partial one (an assigned reason still unmarked) only the cells "
                "answered so far (marked reasons, tagged or untagged categories), never its untouched categories",
    "kappa": "Cohen's kappa between two annotators over the decisions both made (2x2 counts beside it); undefined "
             "when expected agreement is 1",
    "union": "a decision applies when any annotator who made it says so",
    "overall": "pooled over all decisions of the model (micro average)",
    "excluded": "queries whose assignment was unreadable, named categories outside the typology, or (in old stores "
                "and CSVs) was not recorded are left out of every figure and counted here, each apart; never true "
                "negatives",
}


def _ratio(num: int, den: int, what: str):
    return (num / den, None) if den else (None, f"undefined: no {what}")


def confusion_figures(pairs: Iterable[tuple[tuple, int, int]]) -> dict:
    """Figures for ``(query_key, llm, human)`` triples (see the module's definitions)."""
    pairs = list(pairs)
    tp = sum(1 for _, l, h in pairs if l and h)
    fp = sum(1 for _, l, h in pairs if l and not h)
    fn = sum(1 for _, l, h in pairs if not l and h)
    tn = len(pairs) - tp - fp - fn
    queries: dict[tuple, bool] = {}
    for q, l, h in pairs:
        queries[q] = queries.get(q, True) and l == h
    exact = sum(queries.values())
    out = {"n_decisions": len(pairs), "n_queries": len(queries), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
           "n_assigned": tp + fp, "added": fn, "n_exact_queries": exact, "undefined": {}}
    for name, num, den, what in (("cell_accuracy", tp + tn, len(pairs), "decisions"),
                                 ("precision", tp, tp + fp, "LLM-assigned reasons"),
                                 ("recall", tp, tp + fn, "reasons the annotators found applicable"),
                                 ("exact_agreement", exact, len(queries), "queries")):
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
    kappa = cohen_kappa(a.tolist(), b.tolist())
    return {**out, "kappa": kappa, "undefined": KAPPA_UNDEFINED if kappa is None else None}


def _by_category(triples: list[tuple[str, tuple, int, int]], figures) -> dict:
    groups = defaultdict(list)
    for category, *rest in triples:
        groups[category].append(tuple(rest))
    return {OVERALL: figures([tuple(t[1:]) for t in triples]),
            "per_category": {c: figures(groups[c]) for c in sorted(groups)}}


def _triple(key, *values):
    """(category label, query key, v1, v2) for a decision key (run_id, dataset, task, qid, category)."""
    return (f"{key[2]}: {key[4]}", key[:4], *values)


def _llm_figures(decisions: dict[str, dict[tuple, tuple[int, int]]]) -> dict:
    """The LLM against each annotator and against their union, for one model's decisions."""
    union = {}
    for d in decisions.values():
        for key, (llm, human) in d.items():
            union[key] = (llm, max(human, union.get(key, (llm, 0))[1]))
    return {"categories": sorted({f"{k[2]}: {k[4]}" for k in union}),
            "runs": sorted({k[0] for k in union}),
            "llm_vs_annotator": {a: _by_category([_triple(k, l, h) for k, (l, h) in sorted(d.items())],
                                                 confusion_figures) for a, d in sorted(decisions.items()) if d},
            "llm_vs_union": _by_category([_triple(k, l, h) for k, (l, h) in sorted(union.items())], confusion_figures)}


def report(rows: Iterable[dict]) -> dict:
    """All figures from CSV rows (dicts with the CSV columns; 0/1 as ints or strings). Rows without
    ``run_id`` / ``model`` / ``llm_answer`` (a seven-column CSV read as is) count as run "", model
    "" and a readable answer."""
    by_model: dict[str, dict[str, dict[tuple, tuple[int, int]]]] = defaultdict(lambda: defaultdict(dict))
    human_of: dict[str, dict[tuple, int]] = defaultdict(dict)
    llm_of: dict[tuple, int] = {}
    excluded: dict[str, dict[str, set]] = {a: {"queries": set(), "decisions": set()} for a in EXCLUDED_ANSWERS}
    annotators = set()
    n_rows = 0
    for row in rows:
        n_rows += 1
        annotators.add(row["annotator"])
        key = (row.get("run_id") or "", row["dataset"], row["task"], row["qid"], row["category"])
        llm, human = int(row["llm_assigned"]), int(row["human_applicable"])
        answer = row.get("llm_answer") or "readable"
        if answer in EXCLUDED_ANSWERS:
            excluded[answer]["queries"].add(key[:4])
            excluded[answer]["decisions"].add((row["annotator"], *key))
            continue
        if llm_of.setdefault(key, llm) != llm:
            raise ValueError(f"annotators disagree on whether the LLM assigned {key[4]!r} to {key[1]} {key[2]} "
                             f"{key[3]} in typology run {key[0] or '(unknown)'}: these rows cannot be compared")
        by_model[row.get("model") or ""][row["annotator"]][key] = (llm, human)
        human_of[row["annotator"]][key] = human
    annotators = sorted(annotators)
    kappa = {}
    for first, second in combinations(annotators, 2):
        common = sorted(human_of[first].keys() & human_of[second].keys())
        kappa[f"{first} | {second}"] = _by_category(
            [_triple(k, human_of[first][k], human_of[second][k]) for k in common], kappa_figures)
    return {"n_rows": n_rows, "annotators": annotators, "models": sorted(by_model),
            "by_model": {m: _llm_figures(d) for m, d in sorted(by_model.items())},
            "excluded": {a: {"queries": len(v["queries"]), "decisions": len(v["decisions"])}
                         for a, v in excluded.items()},
            "kappa": kappa, "definitions": DEFINITIONS}
