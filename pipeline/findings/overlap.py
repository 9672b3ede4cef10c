"""The overlap claims, per configuration of each dataset's study: ``all_three_under_10pct``,
``half_exclusive``, ``h2r_h2j_largest``.

Each reads the configuration's stored overlap analysis (``ConfigurationResult.analysis``: the study's
sets within the common universe, :mod:`pipeline.sets.overlap`). A configuration whose generator or
judge is a sub-1B model is a part "not measurable here" (its figures exercise the pipeline; they are
shown, never counted as a finding). A dataset without a study is a part "not measurable here".
"""
from __future__ import annotations

from typing import Callable

from pipeline.findings.finding import (FAILS, HOLDS, UNMEASURABLE, Finding, Part, finding, pair_name, paper_claims,
                                      percent)
from pipeline.findings.scope import DatasetStudy, configuration_scope, study_record
from pipeline.study.result import ConfigurationResult, StudyResult

TARGET_PAIR = "h2r&h2j"


def _per_configuration(scoped: list[DatasetStudy], check: Callable[[StudyResult, str, ConfigurationResult], Part]
                       ) -> tuple[list[Part], list[dict]]:
    parts, rests = [], []
    for entry in scoped:
        if entry.study is None:
            parts.append(Part(entry.dataset, {}, UNMEASURABLE, entry.why_none))
            continue
        rests.append(study_record(entry.study))
        for label, config in entry.study.configurations.items():
            part = check(entry.study, label, config)
            if config.small_model and part.verdict != UNMEASURABLE:
                part = Part(part.scope, part.measured, UNMEASURABLE,
                            f"a sub-1B {' and '.join(config.small_model)} ({part.verdict} on its figures): {config.note}")
            parts.append(part)
    return parts, rests


def all_three_under_10pct(scoped: list[DatasetStudy]) -> Finding:
    bound = paper_claims()["all_three_under_10pct"]["bound"]

    def check(study, label, config):
        a = config.analysis
        share = a["all_three"]["share"]
        measured = {"all_three_count": a["all_three"]["count"], "n_queries": a["n_queries"], "all_three_share": share,
                    "all_three_qids": a["all_three"]["qids"]}
        scope = configuration_scope(study, label)
        if share is None:
            return Part(scope, measured, UNMEASURABLE, "no query in the common universe")
        verdict = HOLDS if share < bound else FAILS
        return Part(scope, measured, verdict, f"{percent(share)} ({a['all_three']['count']} of {a['n_queries']}) hard "
                                              f"in all three, {'under' if verdict == HOLDS else 'not under'} {percent(bound)}")

    parts, rests = _per_configuration(scoped, check)
    shares = [p.measured["all_three_share"] for p in parts if p.measured.get("all_three_share") is not None]
    return finding("all_three_under_10pct", parts, rests_on=rests,
                   measured={"max_all_three_share": max(shares) if shares else None,
                             "min_all_three_share": min(shares) if shares else None})


def half_exclusive(scoped: list[DatasetStudy]) -> Finding:
    claim = paper_claims()["half_exclusive"]
    low, high = claim["target"] - claim["tolerance"], claim["target"] + claim["tolerance"]

    def check(study, label, config):
        ex = config.analysis["exclusive"]
        shares = {task: e["share"] for task, e in ex.items()}
        measured = {"exclusive_share": shares, "exclusive_count": {t: e["count"] for t, e in ex.items()},
                    "sizes": config.analysis["sizes"]}
        scope = configuration_scope(study, label)
        empty = [t.upper() for t, s in shares.items() if s is None]
        if empty:
            return Part(scope, measured, UNMEASURABLE, f"empty set(s) {', '.join(empty)}: no share to take")
        outside = {t: s for t, s in shares.items() if not low <= s <= high}
        text = ", ".join(f"{t.upper()} {percent(s)}" for t, s in shares.items())
        if outside:
            return Part(scope, measured, FAILS, f"exclusive shares {text}; outside {percent(low)}-{percent(high)}: "
                                                + ", ".join(t.upper() for t in outside))
        return Part(scope, measured, HOLDS, f"exclusive shares {text}, all within {percent(low)}-{percent(high)}")

    parts, rests = _per_configuration(scoped, check)
    return finding("half_exclusive", parts, rests_on=rests, definitions={"reading": claim["reading"]})


def largest_pair_part(study: StudyResult, label: str, config: ConfigurationResult) -> Part:
    """H2R ∩ H2J the largest pair of one configuration: holds only when it is strictly the largest (a tie
    with another pair is no "largest"; the tie is named)."""
    a = config.analysis
    counts = {k: f["count"] for k, f in a["pairwise"].items()}
    largest = a["largest_pairwise"]
    top = max(counts.values()) if counts else 0
    leaders = sorted(k for k, c in counts.items() if c == top)
    measured = {"pair_counts": counts, "pair_shares": {k: c / a["n_queries"] if a["n_queries"] else None
                                                       for k, c in counts.items()},
                "largest_pair": largest["pair"], "largest_tied_with": largest["tied_with"], "n_queries": a["n_queries"]}
    scope = configuration_scope(study, label)
    text = ", ".join(f"{pair_name(k)} {c}" for k, c in counts.items())
    if TARGET_PAIR not in counts:
        return Part(scope, measured, UNMEASURABLE, "no H2R ∩ H2J pair in this configuration")
    if leaders == [TARGET_PAIR]:
        return Part(scope, measured, HOLDS, f"H2R ∩ H2J the largest ({text})")
    if TARGET_PAIR in leaders:
        return Part(scope, measured, FAILS, f"H2R ∩ H2J tied with {', '.join(pair_name(k) for k in leaders if k != TARGET_PAIR)} "
                                            f"({text}): not the largest")
    return Part(scope, measured, FAILS, f"{' and '.join(pair_name(k) for k in leaders)} the largest ({text})")


def h2r_h2j_largest(scoped: list[DatasetStudy]) -> Finding:
    """Per configuration, then per dataset (every configuration of it), then over the datasets."""
    parts, rests = _per_configuration(scoped, largest_pair_part)
    by_dataset = {}
    for entry in scoped:
        mine = [p for p in parts if p.scope == entry.dataset or p.scope.startswith(f"{entry.dataset} · ")]
        verdict = finding("h2r_h2j_largest", mine)
        by_dataset[entry.dataset] = {"verdict": verdict.verdict, "reason": verdict.reason}
    result = finding("h2r_h2j_largest", parts, rests_on=rests, measured={"by_dataset": by_dataset})
    return result
