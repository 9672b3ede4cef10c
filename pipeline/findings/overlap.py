"""The overlap claims, per configuration of each dataset's study: ``all_three_under_10pct``,
``half_exclusive``, ``h2r_h2j_largest``.

Each reads the configuration's stored overlap analysis (``ConfigurationResult.analysis``: the study's
sets within the common universe, :mod:`pipeline.sets.overlap`) by the claim's rule in the claims file
(statistic, minimum n, threshold, level, correction; :mod:`pipeline.findings.evidence`):

- ``all_three_under_10pct``: the Wilson interval of the all-three share against 10%;
- ``half_exclusive``: each set's exclusive share's Wilson interval against 0.5 +/- 0.1;
- ``h2r_h2j_largest``: a seeded bootstrap over the universe's queries of which pair is the largest.

A configuration with n under the claim's minimum, a universe under half of the judged queries or a
gated model (sub-1B or of unknown size) is a part ``inconclusive`` with that reason first; what its
figures alone say follows it. A dataset without a study is a part "not measurable here".
"""
from __future__ import annotations

from typing import Callable

from pipeline.findings.evidence import (against_band, against_bound, configuration_gates, family_level,
                                        family_threshold, graded, interval_text, largest_pair_bootstrap,
                                        model_lines)
from pipeline.findings.finding import (FAILS, HOLDS, INCONCLUSIVE, UNMEASURABLE, Finding, Part, finding, pair_name,
                                       paper_claims, percent)
from pipeline.findings.scope import DatasetStudy, configuration_scope, study_record
from pipeline.prompting.pairwise import wilson_interval
from pipeline.sets.overlap import TASKS
from pipeline.study.result import ConfigurationResult, StudyResult

TARGET_PAIR = "h2r&h2j"


def _per_configuration(scoped: list[DatasetStudy],
                       check: Callable[[StudyResult, str, ConfigurationResult, int], Part]
                       ) -> tuple[list[Part], list[dict]]:
    """Each configuration's part (``check(study, label, config, m)``, ``m``: the family's size, every
    configuration the finding reads), and a part "not measurable here" per dataset without a study."""
    parts, rests = [], []
    m = sum(len(e.study.configurations) for e in scoped if e.study is not None)
    for entry in scoped:
        if entry.study is None:
            parts.append(Part(entry.dataset, {}, UNMEASURABLE, entry.why_none))
            continue
        rests.append(study_record(entry.study))
        for label, config in entry.study.configurations.items():
            parts.append(check(entry.study, label, config, m))
    return parts, rests


def _evidence(study: StudyResult, label: str, rule: dict, **figures) -> dict:
    return {"n": study.configurations[label].analysis["n_queries"], "statistic": rule["statistic"],
            "models": model_lines(study, label), **figures}


def all_three_under_10pct(scoped: list[DatasetStudy]) -> Finding:
    rule = paper_claims()["all_three_under_10pct"]["rule"]
    bound = rule["threshold"]

    def check(study, label, config, m):
        a = config.analysis
        count, n = a["all_three"]["count"], a["n_queries"]
        measured = {"all_three_count": count, "n_queries": n, "all_three_share": a["all_three"]["share"],
                    "all_three_qids": a["all_three"]["qids"]}
        scope = configuration_scope(study, label)
        if not n:
            return Part(scope, measured, UNMEASURABLE, "no query in the common universe")
        level = family_level(rule, m)
        interval = wilson_interval(count, n, level)
        measured["interval"] = list(interval)
        shown = f"{interval_text(interval, level)} vs < {percent(bound)}"
        verdict = against_bound(interval, bound)
        text = (f"{percent(count / n)} ({count} of {n}) hard in all three; {shown}: "
                + {HOLDS: "under", FAILS: "not under", INCONCLUSIVE: "straddles"}[verdict] + f" {percent(bound)}")
        return graded(scope, measured, verdict, text,
                      _evidence(study, label, rule, interval=list(interval), level=level, threshold=bound, shown=shown),
                      configuration_gates(study, label, rule))

    parts, rests = _per_configuration(scoped, check)
    shares = [p.measured["all_three_share"] for p in parts if p.measured.get("all_three_share") is not None]
    return finding("all_three_under_10pct", parts, rests_on=rests,
                   measured={"max_all_three_share": max(shares) if shares else None,
                             "min_all_three_share": min(shares) if shares else None})


def half_exclusive(scoped: list[DatasetStudy]) -> Finding:
    claim = paper_claims()["half_exclusive"]
    rule = claim["rule"]
    low, high = rule["target"] - rule["tolerance"], rule["target"] + rule["tolerance"]

    def check(study, label, config, m):
        ex = config.analysis["exclusive"]
        sizes = config.analysis["sizes"]
        measured = {"exclusive_share": {t: e["share"] for t, e in ex.items()},
                    "exclusive_count": {t: e["count"] for t, e in ex.items()}, "sizes": sizes}
        scope = configuration_scope(study, label)
        gates = configuration_gates(study, label, rule)
        empty = [t.upper() for t, e in ex.items() if e["share"] is None]
        if empty and not gates:
            return Part(scope, measured, UNMEASURABLE, f"empty set(s) {', '.join(empty)}: no share to take")
        level = family_level(rule, 3 * m)  # one interval per set of each configuration
        intervals = {t: list(wilson_interval(e["count"], sizes[t], level)) for t, e in ex.items() if sizes[t]}
        measured["intervals"] = intervals
        each = {t: against_band(i, low, high) for t, i in intervals.items()}
        verdict = (FAILS if FAILS in each.values() else INCONCLUSIVE if INCONCLUSIVE in each.values() or empty
                   else HOLDS)
        shown = "; ".join(f"{t.upper()} {ex[t]['count']} of {sizes[t]}: {interval_text(i, level)}"
                          for t, i in intervals.items()) + f" vs {percent(low)}-{percent(high)}"
        named = {v: [t.upper() for t, x in each.items() if x == v] for v in (FAILS, INCONCLUSIVE)}
        text = shown + ("; outside: " + ", ".join(named[FAILS]) if named[FAILS] else
                        "; straddling: " + ", ".join(named[INCONCLUSIVE]) if named[INCONCLUSIVE] else "; all inside")
        return graded(scope, measured, verdict, text,
                      _evidence(study, label, rule, intervals=intervals, level=level, band=[low, high], shown=shown),
                      gates)

    parts, rests = _per_configuration(scoped, check)
    return finding("half_exclusive", parts, rests_on=rests, definitions={"reading": claim["reading"]})


def universe_of(config: ConfigurationResult) -> list[str]:
    """The configuration's universe as the bootstrap needs it: every query of its sets, and a stand-in for each
    query in none (it counts in no pair whatever its id; the analysis' ``n_queries`` says how many there are)."""
    named = sorted({q for task in TASKS for q in config.hard_in_universe[task]})
    return named + [f"(in no set {i})" for i in range(config.analysis["n_queries"] - len(named))]


def largest_pair_part(study: StudyResult, label: str, config: ConfigurationResult, m: int = 1) -> Part:
    """H2R ∩ H2J the largest pair of one configuration, read by a seeded bootstrap over the universe's queries
    (module docstring); ``m``: the family's size (the support threshold's correction)."""
    rule = paper_claims()["h2r_h2j_largest"]["rule"]
    a = config.analysis
    counts = {k: f["count"] for k, f in a["pairwise"].items()}
    largest = a["largest_pairwise"]
    measured = {"pair_counts": counts, "pair_shares": {k: c / a["n_queries"] if a["n_queries"] else None
                                                       for k, c in counts.items()},
                "largest_pair": largest["pair"], "largest_tied_with": largest["tied_with"], "n_queries": a["n_queries"]}
    scope = configuration_scope(study, label)
    text = ", ".join(f"{pair_name(k)} {c}" for k, c in counts.items())
    if TARGET_PAIR not in counts:
        return Part(scope, measured, UNMEASURABLE, f"no {pair_name(TARGET_PAIR)} pair in this configuration")
    if not a["n_queries"]:
        return Part(scope, measured, UNMEASURABLE, "no query in the common universe")
    boot = largest_pair_bootstrap(config.hard_in_universe, universe_of(config), TARGET_PAIR,
                                  resamples=rule["resamples"], seed=rule["seed"])
    threshold = family_threshold(rule, m)
    measured["bootstrap"] = boot
    shown = (f"{pair_name(TARGET_PAIR)} strictly largest in {percent(boot['target_largest'])}, another pair larger "
             f"in {percent(boot['another_larger'])} of {boot['resamples']} resamples (seed {boot['seed']}; "
             f"threshold {percent(threshold)})")
    if boot["target_largest"] >= threshold:
        verdict = HOLDS
    elif boot["another_larger"] >= threshold:
        verdict = FAILS
    else:
        verdict = INCONCLUSIVE
    leaders = [largest["pair"], *largest["tied_with"]] if largest["pair"] else []
    lead = (f"{pair_name(leaders[0])} the largest" if len(leaders) == 1
            else f"{' and '.join(pair_name(k) for k in leaders)} tied largest")
    return graded(scope, measured, verdict, f"{lead} ({text}); {shown}",
                  _evidence(study, label, rule, bootstrap=boot, threshold=threshold, shown=shown),
                  configuration_gates(study, label, rule),
                  unsure="no pair is the largest in enough resamples")


def h2r_h2j_largest(scoped: list[DatasetStudy]) -> Finding:
    """Per configuration, then per dataset (every configuration of it), then over the datasets."""
    parts, rests = _per_configuration(scoped, largest_pair_part)
    by_dataset = {}
    for entry in scoped:
        mine = [p for p in parts if p.scope == entry.dataset or p.scope.startswith(f"{entry.dataset} · ")]
        verdict = finding("h2r_h2j_largest", mine)
        by_dataset[entry.dataset] = {"verdict": verdict.verdict, "reason": verdict.reason}
    return finding("h2r_h2j_largest", parts, rests_on=rests, measured={"by_dataset": by_dataset})
