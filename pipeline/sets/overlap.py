"""Overlap of the three failure sets (H2R, H2G, H2J) of one dataset and configuration.

Figures, over the ``N`` queries that all three tasks score (the *universe*):

- the seven Venn regions (queries in exactly those sets), with counts and query ids;
- the share of the universe hard in all three tasks;
- each set's exclusive share: |A only| / |A|;
- per pair (A, B): |A ∩ B|, Jaccard |A ∩ B| / |A ∪ B|, the conditional shares |A ∩ B| / |A| and
  |A ∩ B| / |B|, the overlap expected if the sets were drawn independently |A| |B| / N, and the
  one-sided hypergeometric p-value P(X >= |A ∩ B|), X ~ Hypergeom(N, |A|, |B|) (scipy.stats), which
  tells "larger than chance" apart from "largest".

A study with a further task (a fourth failure task, a predictor: :mod:`pipeline.study.task`) keeps the
paper's figures (the Venn regions, the all-three and exclusive shares, the largest pair) over the three
sets of :data:`TASKS`, and adds the pairs with the further sets beside them (:func:`further_pairwise`,
the analysis' ``further_pairwise``; :func:`all_pairwise` lists both), over the same universe.

This module computes figures over sets it is given and imports nothing of the study: the sets of a
configuration come from :func:`pipeline.study.run.failure_sets` (one configuration) or
:func:`pipeline.study.run.run_study` (every configuration), which import this module, never the
other way round.
"""
from __future__ import annotations

from itertools import combinations
from typing import Iterable, Mapping

from scipy import stats

from pipeline.sets.rule import HardSet

TASKS = ("h2r", "h2g", "h2j")


def region_name(members: Iterable[str]) -> str:
    """``("h2r", "h2j")`` -> ``"h2r&h2j"`` (the JSON key of a Venn region, and of a pair's intersection)."""
    return "&".join(members)


# One vocabulary for the two things a key like ``h2r&h2g`` can name (issue 33: "H2R ∩ H2G" was the region
# without H2J, 8 queries, in one CSV and the whole intersection, 11, in another). Every table, figure, CSV
# and verdict names them through these two functions, never by joining the key itself.
ONLY, WHOLE, ALL_THREE = "only", "incl.", "all three"


def region_label(key: str, tasks: Iterable[str] = TASKS) -> str:
    """A Venn region, the queries in exactly those sets: ``h2r`` -> ``H2R only``, ``h2r&h2g`` -> ``H2R ∩ H2G
    only`` (not in H2J), ``h2r&h2g&h2j`` -> ``all three`` (in every set: nothing to leave out)."""
    members = key.split("&")
    if set(tasks) <= set(members):
        return ALL_THREE
    return " ∩ ".join(m.upper() for m in members) + f" {ONLY}"


def intersection_label(key: str | None, tasks: Iterable[str] = TASKS) -> str:
    """A pair's whole intersection, |A ∩ B| (the pairwise figures): ``h2r&h2g`` -> ``H2R ∩ H2G (incl. H2J)``,
    the region ``H2R ∩ H2G only`` plus the queries hard in all three; a pair with a further task ->
    ``H2R ∩ PRED`` (no region bears that name: the Venn regions are the paper's three sets'). ``None`` (no
    pair) -> ``none``."""
    if not key:
        return "none"
    members = key.split("&")
    joined = " ∩ ".join(m.upper() for m in members)
    rest = [t.upper() for t in tasks if t not in members]
    if set(members) <= set(tasks) and rest:
        return f"{joined} ({WHOLE} {', '.join(rest)})"
    return joined


def pairwise(a: set, b: set, n: int) -> dict:
    """Overlap figures of two sets drawn from ``n`` queries (see the module docstring)."""
    both = len(a & b)
    union = len(a | b)
    expected = len(a) * len(b) / n if n else 0.0
    # P(X >= both): sf(k - 1); scipy's argument order is (k, M = population, n = successes, N = draws)
    p_value = float(stats.hypergeom.sf(both - 1, n, len(a), len(b))) if n else 1.0
    return {"count": both, "jaccard": both / union if union else 0.0,
            "share_of_first": both / len(a) if a else 0.0, "share_of_second": both / len(b) if b else 0.0,
            "expected_if_independent": expected, "ratio_to_expected": both / expected if expected else None,
            "p_value": min(1.0, max(0.0, p_value))}


def overlap_analysis(sets: Mapping[str, Iterable[str]], universe: Iterable[str]) -> dict:
    """All overlap figures of named sets (normally ``h2r``, ``h2g``, ``h2j``) within ``universe``."""
    universe = set(universe)
    members = {name: set(qids) for name, qids in sets.items()}
    for name, qids in members.items():
        outside = qids - universe
        if outside:
            raise ValueError(f"set {name} holds {len(outside)} queries outside the universe, e.g. {sorted(outside)[0]}")
    n = len(universe)
    regions = {region_name(k): {"count": len(v), "qids": v} for k, v in overlap_regions(members).items()}
    names = list(members)
    everything = set.intersection(*members.values()) if members else set()
    exclusive = {}
    for name in names:
        only = regions[name]["count"]
        exclusive[name] = {"count": only, "share": only / len(members[name]) if members[name] else None}
    pairs = {region_name((a, b)): {"first": a, "second": b, **pairwise(members[a], members[b], n)}
             for a, b in combinations(names, 2)}
    largest = max(pairs, key=lambda k: (pairs[k]["count"], pairs[k]["jaccard"])) if pairs else None
    ties = [k for k in pairs if largest and pairs[k]["count"] == pairs[largest]["count"]]
    return {"n_queries": n, "sizes": {name: len(q) for name, q in members.items()},
            "sets": {name: sorted(q) for name, q in members.items()},
            "regions": regions,
            "all_three": {"count": len(everything), "share": len(everything) / n if n else None,
                          "qids": sorted(everything)},
            "exclusive": exclusive, "pairwise": pairs,
            "largest_pairwise": {"pair": largest, "count": pairs[largest]["count"] if largest else 0,
                                 "p_value": pairs[largest]["p_value"] if largest else None,
                                 "tied_with": [k for k in ties if k != largest]}}


def further_pairwise(sets: Mapping[str, Iterable[str]], universe: Iterable[str],
                     paper: Iterable[str] = TASKS) -> dict:
    """The pairwise figures (:func:`pairwise`) of every pair of ``sets`` with at least one set beyond
    ``paper`` (the study's further tasks), in the order the sets are named; ``{}`` without such a set."""
    paper, n = set(paper), len(set(universe))
    members = {name: set(qids) for name, qids in sets.items()}
    return {region_name((a, b)): {"first": a, "second": b, **pairwise(members[a], members[b], n)}
            for a, b in combinations(members, 2) if not {a, b} <= paper}


def further_task_names(analysis: Mapping) -> list[str]:
    """The further tasks an analysis pairs with the paper's sets, in order (a three-task study: none)."""
    named = [f[side] for f in analysis.get("further_pairwise", {}).values() for side in ("first", "second")]
    return [t for t in dict.fromkeys(named) if t not in TASKS]


def all_pairwise(analysis: Mapping) -> dict:
    """Every pair's figures of an analysis: the paper's three pairs, then those with further tasks."""
    return {**analysis["pairwise"], **analysis.get("further_pairwise", {})}


def further_note(analysis: dict) -> str | None:
    """What a page or an export says of a configuration with further tasks (a three-task study: None): the
    diagram is the paper's three sets, the pairwise table pairs them with the further ones."""
    further = further_task_names(analysis)
    if not further:
        return None
    return (f"The Venn diagram, its regions and the shares are the paper's three sets (H2R, H2G, H2J); the "
            f"pairwise table also pairs them with the further task{'s' if len(further) > 1 else ''} "
            f"{', '.join(t.upper() for t in further)} (same universe).")


def stability_table(analyses: Mapping[str, Mapping]) -> list[dict]:
    """One row per (configuration, pair): count, Jaccard, expected, p-value, and whether the pair is
    the configuration's largest; plus the all-three share. ``analyses`` maps a configuration label to
    :func:`overlap_analysis` output."""
    rows = []
    for config, analysis in analyses.items():
        for pair, fig in analysis["pairwise"].items():
            rows.append({"configuration": config, "pair": pair, "count": fig["count"],
                         "jaccard": fig["jaccard"], "expected": fig["expected_if_independent"],
                         "p_value": fig["p_value"], "largest": pair == analysis["largest_pairwise"]["pair"],
                         "all_three_share": analysis["all_three"]["share"], "n_queries": analysis["n_queries"]})
    return rows


def intersection(sets: Iterable[HardSet | Iterable[str]]) -> list[str]:
    """Queries in every set ("hard under all"), sorted by qid."""
    members = [set(s.qids if isinstance(s, HardSet) else s) for s in sets]
    if not members:
        return []
    return sorted(set.intersection(*members))


def overlap_regions(named_sets: Mapping[str, Iterable[str]]) -> dict[tuple[str, ...], list[str]]:
    """Exclusive Venn regions: ``{(names in, ...): qids in exactly those sets}`` (empty regions kept).

    For sets A, B: ``(A,)`` = A only, ``(B,)`` = B only, ``(A, B)`` = both.
    """
    names = list(named_sets)
    members = {name: set(named_sets[name]) for name in names}
    universe = set().union(*members.values()) if members else set()
    regions: dict[tuple[str, ...], list[str]] = {}
    for size in range(1, len(names) + 1):
        for combo in combinations(names, size):
            inside = set.intersection(*(members[n] for n in combo))
            outside = set().union(*(members[n] for n in names if n not in combo))
            regions[combo] = sorted((inside - outside) & universe)
    return regions
