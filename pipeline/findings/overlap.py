"""The overlap claims, per configuration of each dataset's study: ``all_three_under_10pct``,
``half_exclusive``, ``h2r_h2j_largest``.

Each reads the configuration's stored overlap analysis (``ConfigurationResult.analysis``: the study's
sets within the common universe, :mod:`pipeline.sets.overlap`) and hands it to the inference core
(:mod:`core.inference`) by the claim's rule in the claims file:

- ``all_three_under_10pct``: a bound, the all-three share under 10% (one-sided Wilson bounds, score test);
- ``half_exclusive``: an equivalence per set, its exclusive share within 0.4-0.6 (TOST); the minimum n
  counts the set's members, so a set of 11 is inconclusive with the set size that would decide;
- ``h2r_h2j_largest``: an order, H2R ∩ H2J against each other pair on the same queries (exact sign test).

Every claim holds on every configuration or not: each configuration's "holds" is read at the claim's
level with no correction, "does not hold" Holm-corrected across the family (:func:`core.inference.combine.every`).
A configuration with n under the claim's minimum, a universe under half of the judged queries or a gated
model (sub-1B or of unknown size) is a part ``inconclusive`` with that reason first; what its figures alone
say follows it. A dataset without a study is a part "not measurable here".
"""
from __future__ import annotations

from typing import Callable

from core.inference.claims import Proportion, Sign, bound, equivalence, joint, order
from pipeline.findings.evidence import Unit, context_gates, graded_parts, model_lines
from pipeline.findings.finding import (INCONCLUSIVE, UNMEASURABLE, Finding, Part, claim_rule, finding, pair_name, paper_claims,
                                       percent)
from pipeline.findings.scope import DatasetStudy, configuration_scope, study_record
from pipeline.study.result import ConfigurationResult, StudyResult

TARGET_PAIR = "h2r&h2j"


def _per_configuration(scoped: list[DatasetStudy],
                       check: Callable[[StudyResult, str, ConfigurationResult], Unit | Part]
                       ) -> tuple[list[Unit | Part], list[dict]]:
    """Each configuration's unit (``check(study, label, config)``) and a part "not measurable here" per
    dataset without a study."""
    entries, rests = [], []
    for entry in scoped:
        if entry.study is None:
            entries.append(Part(entry.dataset, {}, UNMEASURABLE, entry.why_none))
            continue
        rests.append(study_record(entry.study))
        for label, config in entry.study.configurations.items():
            entries.append(check(entry.study, label, config))
    return entries, rests


def all_three_part(study: StudyResult, label: str, config: ConfigurationResult) -> Unit | Part:
    """One configuration's all-three share as a bound under the claim's threshold (before the family's correction)."""
    claim = claim_rule("all_three_under_10pct")
    a = config.analysis
    count, n = a["all_three"]["count"], a["n_queries"]
    measured = {"all_three_count": count, "n_queries": n, "all_three_share": a["all_three"]["share"],
                "all_three_qids": a["all_three"]["qids"]}
    scope = configuration_scope(study, label)
    if not n:
        return Part(scope, measured, UNMEASURABLE, "no query in the common universe")
    decision = bound(Proportion(count, n, claim.counts), claim).gated(context_gates(study, label))
    measured["interval"] = list(decision.interval)
    return Unit(scope, measured, decision, model_lines(study, label),
                lead=f"{percent(count / n)} ({count} of {n}) hard in all three")


def all_three_under_10pct(scoped: list[DatasetStudy]) -> Finding:
    entries, rests = _per_configuration(scoped, all_three_part)
    parts = graded_parts(entries)
    shares = [p.measured["all_three_share"] for p in parts if p.measured.get("all_three_share") is not None]
    return finding("all_three_under_10pct", parts, rests_on=rests,
                   measured={"max_all_three_share": max(shares) if shares else None,
                             "min_all_three_share": min(shares) if shares else None})


def exclusive_part(study: StudyResult, label: str, config: ConfigurationResult) -> Unit | Part:
    """One configuration's three exclusive shares, each an equivalence within the margin, jointly."""
    claim = claim_rule("half_exclusive")
    ex = config.analysis["exclusive"]
    sizes = config.analysis["sizes"]
    measured = {"exclusive_share": {t: e["share"] for t, e in ex.items()},
                "exclusive_count": {t: e["count"] for t, e in ex.items()}, "sizes": sizes}
    scope = configuration_scope(study, label)
    gates = context_gates(study, label)
    empty = [t.upper() for t in ex if not sizes[t]]
    if empty:
        why = f"empty set(s) {', '.join(empty)}: no share to take"
        return Part(scope, measured, INCONCLUSIVE if gates else UNMEASURABLE,
                    f"{'; '.join(gates)} ({why})" if gates else why, {"inconclusive_because": gates})
    each = {t.upper(): equivalence(Proportion(e["count"], sizes[t], claim.counts), claim) for t, e in ex.items()}
    decision = joint(each, claim).gated(gates)
    measured["intervals"] = {t: list(each[t.upper()].interval) for t in ex}
    return Unit(scope, measured, decision, model_lines(study, label))


def half_exclusive(scoped: list[DatasetStudy]) -> Finding:
    claim = paper_claims()["half_exclusive"]
    entries, rests = _per_configuration(scoped, exclusive_part)
    return finding("half_exclusive", graded_parts(entries), rests_on=rests, definitions={"reading": claim["reading"]})


def pair_members(sets: dict, pair: str) -> set[str]:
    """The queries of a pair's whole intersection (``h2r&h2j``: in H2R and in H2J, whatever H2G says)."""
    a, b = pair.split("&")
    return set(sets[a]) & set(sets[b])


def largest_pair_part(study: StudyResult, label: str, config: ConfigurationResult) -> Unit | Part:
    """H2R ∩ H2J against each other pair of one configuration, on the same queries (module docstring)."""
    claim = claim_rule("h2r_h2j_largest")
    a = config.analysis
    n = a["n_queries"]
    counts = {k: f["count"] for k, f in a["pairwise"].items()}
    largest = a["largest_pairwise"]
    measured = {"pair_counts": counts, "pair_shares": {k: c / n if n else None for k, c in counts.items()},
                "largest_pair": largest["pair"], "largest_tied_with": largest["tied_with"], "n_queries": n}
    scope = configuration_scope(study, label)
    text = ", ".join(f"{pair_name(k)} {c}" for k, c in counts.items())
    if TARGET_PAIR not in counts:
        return Part(scope, measured, UNMEASURABLE, f"no {pair_name(TARGET_PAIR)} pair in this configuration")
    if not n:
        return Part(scope, measured, UNMEASURABLE, "no query in the common universe")
    sets = config.hard_in_universe
    target = pair_members(sets, TARGET_PAIR)
    against = {}
    for pair in counts:
        if pair != TARGET_PAIR:
            other = pair_members(sets, pair)
            against[pair_name(pair)] = Sign(len(target - other), len(other - target), n, claim.counts)
    decision = order(pair_name(TARGET_PAIR), against, claim).gated(context_gates(study, label))
    measured["paired"] = decision.details["competitors"]
    leaders = [largest["pair"], *largest["tied_with"]] if largest["pair"] else []
    lead = (f"{pair_name(leaders[0])} the largest" if len(leaders) == 1
            else f"{' and '.join(pair_name(k) for k in leaders)} tied largest")
    return Unit(scope, measured, decision, model_lines(study, label), lead=f"{lead} ({text})")


def h2r_h2j_largest(scoped: list[DatasetStudy]) -> Finding:
    """Per configuration, then per dataset (every configuration of it), then over the datasets."""
    entries, rests = _per_configuration(scoped, largest_pair_part)
    parts = graded_parts(entries)
    by_dataset = {}
    for entry in scoped:
        mine = [p for p in parts if p.scope == entry.dataset or p.scope.startswith(f"{entry.dataset} · ")]
        verdict = finding("h2r_h2j_largest", mine)
        by_dataset[entry.dataset] = {"verdict": verdict.verdict, "reason": verdict.reason}
    return finding("h2r_h2j_largest", parts, rests_on=rests, measured={"by_dataset": by_dataset})
