"""``structure_stable``: the overlap structure across systems, measured on configurations that differ in
one component (retriever, generator, judge or judging setup) within a dataset's study.

For each such pair of configurations: the change of each pairwise share (|A ∩ B| / N, second minus
first) and of the all-three share, whether the largest pair is the same, and the rank agreement of the
two systems' per-query values over the queries both scored (Kendall τ-b and RBO hardest first,
:mod:`pipeline.stats.rank`): the two retrievers' nDCG@10, the two generators' BERTScore F1, or the two
judges' (or setups') disagreement. The claim is read by its rule in the claims file: each pairwise
share's change, with a paired bootstrap interval over the queries both universes hold (Bonferroni across
every change the finding reads), against +/- the rule's tolerance; a pair of configurations with n under
the minimum, a universe under half of the judged queries or a gated model is inconclusive.
"""
from __future__ import annotations

from itertools import combinations

from pipeline.findings.evidence import (against_band, context_gates, family_level, graded, model_lines, n_gate,
                                        share_change_bootstrap)
from pipeline.findings.finding import (FAILS, HOLDS, INCONCLUSIVE, UNMEASURABLE, Finding, Part, finding, pair_name,
                                       paper_claims)
from pipeline.findings.scope import DatasetStudy, study_record
from pipeline.stats.rank import rank_agreement
from pipeline.study.result import StudyResult

FIELDS = ("retriever", "generator", "judge", "setup")


def _leaders(analysis: dict) -> list[str]:
    counts = {k: f["count"] for k, f in analysis["pairwise"].items()}
    top = max(counts.values()) if counts else 0
    return sorted(k for k, c in counts.items() if c == top)


def _values(study: StudyResult, label: str, component: str) -> tuple[dict, bool]:
    """The per-query values of the component a configuration pair differs in, and whether higher is harder."""
    if component == "retriever":
        return study.retriever(label).per_query, False
    if component == "generator":
        return study.generator(label).per_query, False
    return study.judge(label).per_query, True  # judge or setup: disagreement, higher = harder


def one_component_pairs(study: StudyResult) -> list[tuple[str, str, str]]:
    """``(first label, second label, the component they differ in)`` for every two configurations of the
    study that differ in exactly one of retriever, generator, judge and setup."""
    out = []
    for a, b in combinations(study.configurations, 2):
        ca, cb = study.configurations[a].components.to_dict(), study.configurations[b].components.to_dict()
        differ = [f for f in FIELDS if ca[f] != cb[f]]
        if len(differ) == 1:
            out.append((a, b, differ[0]))
    return out


def compare(study: StudyResult, first: str, second: str, component: str) -> dict:
    """The measured figures of one pair of configurations (module docstring)."""
    a, b = study.configurations[first].analysis, study.configurations[second].analysis
    shares = {}
    for key in a["pairwise"]:
        sa = a["pairwise"][key]["count"] / a["n_queries"] if a["n_queries"] else None
        sb = b["pairwise"][key]["count"] / b["n_queries"] if b["n_queries"] else None
        shares[key] = {"first": sa, "second": sb, "change": None if sa is None or sb is None else sb - sa}
    values_a, descending = _values(study, first, component)
    values_b, _ = _values(study, second, component)
    return {"first": first, "second": second, "differs_in": component,
            "pair_shares": shares,
            "all_three_change": (None if a["all_three"]["share"] is None or b["all_three"]["share"] is None
                                 else b["all_three"]["share"] - a["all_three"]["share"]),
            "largest_first": _leaders(a), "largest_second": _leaders(b),
            "same_largest": _leaders(a) == _leaders(b),
            "rank_agreement": rank_agreement(values_a, values_b, descending=descending)}


def structure_stable(scoped: list[DatasetStudy]) -> Finding:
    rule = paper_claims()["structure_stable"]["rule"]
    tolerance = rule["tolerance"]
    parts, rests, planned = [], [], []
    for entry in scoped:
        if entry.study is None:
            parts.append(Part(entry.dataset, {}, UNMEASURABLE, entry.why_none))
            continue
        study = entry.study
        rests.append(study_record(study))
        pairs = one_component_pairs(study)
        if not pairs:
            parts.append(Part(study.dataset, {}, UNMEASURABLE,
                              f"study {study.id} has no two configurations that differ in one component "
                              f"({len(study.configurations)} configuration(s))"))
        planned += [(study, *pair) for pair in pairs]
    # the family: every pairwise share of every configuration pair the finding reads
    level = family_level(rule, sum(len(s.configurations[a].analysis["pairwise"]) for s, a, _, _ in planned))
    for study, first, second, component in planned:
        parts.append(_pair_part(study, first, second, component, rule, level))
    return finding("structure_stable", parts, rests_on=rests,
                   definitions={"reading": paper_claims()["structure_stable"]["reading"],
                                "pair share": "|A ∩ B| / N over the configuration's common universe",
                                "change": "second minus first, both over the queries both universes hold, with its "
                                          f"paired bootstrap interval ({rule['resamples']} resamples, seed "
                                          f"{rule['seed']}); tolerance {tolerance}",
                                "kendall_tau": "Kendall τ-b of the two systems' per-query values (scipy.stats)",
                                "rbo": "extrapolated rank-biased overlap, hardest first, p = 0.9 "
                                       "(Webber et al. 2010; pipeline.stats.rank)"})


def _of_either(study: StudyResult, first: str, second: str, lines_of) -> list[str]:
    """``lines_of(study, label)`` of both configurations, each line once: one both share as it is, one of a
    single configuration prefixed with its label."""
    a, b = lines_of(study, first), lines_of(study, second)
    return ([line for line in a if line in b] + [f"{first}: {line}" for line in a if line not in b]
            + [f"{second}: {line}" for line in b if line not in a])


def _pair_part(study: StudyResult, first: str, second: str, component: str, rule: dict, level: float) -> Part:
    """One pair of configurations: each pairwise share's change and its interval against +/- the tolerance."""
    tolerance = rule["tolerance"]
    measured = compare(study, first, second, component)
    scope = f"{study.dataset} · {component}: {first} → {second}"
    lead = ["/".join(pair_name(k) for k in measured[side]) for side in ("largest_first", "largest_second")]
    agreement = measured["rank_agreement"]
    tau = "τ undefined" if agreement["kendall_tau"] is None else f"τ {agreement['kendall_tau']:.2f}"
    rbo = "RBO —" if agreement["rbo"] is None else f"RBO {agreement['rbo']:.2f}"
    context = f"largest {lead[0]} → {lead[1]}; {tau}, {rbo} over {agreement['n']} queries"
    shared = sorted(set(study.universe_ids(first)) & set(study.universe_ids(second)))
    gates = n_gate(len(shared), rule) + _of_either(study, first, second, context_gates)
    if not shared:
        return Part(scope, measured, UNMEASURABLE if not gates else INCONCLUSIVE,
                    f"no query in both universes ({context})", {"n": 0, "inconclusive_because": gates})
    changes = share_change_bootstrap(study.configurations[first].hard_in_universe,
                                     study.configurations[second].hard_in_universe, shared, level=level,
                                     resamples=rule["resamples"], seed=rule["seed"])
    measured["share_changes"] = changes
    each = {k: against_band(c["interval"], -tolerance, tolerance) for k, c in changes.items()}
    verdict = FAILS if FAILS in each.values() else INCONCLUSIVE if INCONCLUSIVE in each.values() else HOLDS
    shown = "; ".join(f"{pair_name(k)} {c['change']:+.3f} [{c['interval'][0]:+.3f}, {c['interval'][1]:+.3f}]"
                      for k, c in changes.items()) + f" ({level:.1%} bootstrap) vs ±{tolerance}"
    evidence = {"n": len(shared), "statistic": rule["statistic"], "level": level, "tolerance": tolerance,
                "changes": changes, "shown": shown,
                "models": _of_either(study, first, second, model_lines)}
    return graded(scope, measured, verdict, f"share changes {shown}; {context}", evidence, gates,
                  unsure="a change's interval straddles the tolerance")
