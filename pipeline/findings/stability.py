"""``structure_stable``: the overlap structure across systems, measured on configurations that differ in
one component (retriever, generator, judge or judging setup) within a dataset's study.

For each such pair of configurations: the change of each pairwise share (|A ∩ B| / N, second minus
first) and of the all-three share, whether the largest pair is the same, and the rank agreement of the
two systems' per-query values over the queries both scored (Kendall τ-b and RBO hardest first,
:mod:`pipeline.stats.rank`): the two retrievers' nDCG@10, the two generators' BERTScore F1, or the two
judges' (or setups') disagreement. The claim is read by its rule in the claims file, an equivalence the
inference core decides (:mod:`core.inference`): each pairwise share's change over the queries both universes
hold (second share minus first on the same queries, a paired difference of proportions: Newcombe's hybrid
score interval and the tests it inverts, :mod:`core.inference.paired_share`) within +/- the margin, every
change of a pair of configurations jointly, "does not hold" Holm-corrected across every change the finding
reads; a pair of configurations with n under the minimum, a universe under half of the judged queries or a
gated model is inconclusive.

A pair that differs in its generator also shows the change beside one generator's sampling spread, when an
``h2g-samples`` result of either is stored (evidence ``within_generator``, :mod:`pipeline.study.sampling`): a
change of generator says something only where it exceeds what drawing another sample changes.
"""
from __future__ import annotations

from itertools import combinations

from core.inference.claims import equivalence, joint
from core.inference.paired_share import PairedShares
from pipeline.findings.evidence import Unit, context_gates, graded_parts, model_lines
from pipeline.findings.finding import (INCONCLUSIVE, UNMEASURABLE, Finding, Part, claim_rule, finding, pair_name,
                                       paper_claims)
from pipeline.findings.overlap import pair_members
from pipeline.findings.scope import DatasetStudy, study_record
from pipeline.stats.rank import rank_agreement
from pipeline.study.result import StudyResult
from pipeline.study.sampling import within_generator_evidence

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
    claim = claim_rule("structure_stable")
    entries, rests = [], []
    for entry in scoped:
        if entry.study is None:
            entries.append(Part(entry.dataset, {}, UNMEASURABLE, entry.why_none))
            continue
        study = entry.study
        rests.append(study_record(study))
        pairs = one_component_pairs(study)
        if not pairs:
            entries.append(Part(study.dataset, {}, UNMEASURABLE,
                                f"study {study.id} has no two configurations that differ in one component "
                                f"({len(study.configurations)} configuration(s))"))
        entries += [_pair_unit(study, *pair) for pair in pairs]
    low, high = claim.margin
    return finding("structure_stable", graded_parts(entries), rests_on=rests,
                   definitions={"reading": paper_claims()["structure_stable"]["reading"],
                                "pair share": "|A ∩ B| / N over the configuration's common universe",
                                "change": "second minus first over the queries both universes hold, a paired "
                                          "difference of proportions: Newcombe's hybrid score interval (1998, "
                                          "method 10) and the tests it inverts, two one-sided tests against the "
                                          f"margin {low:+g} to {high:+g}",
                                "kendall_tau": "Kendall τ-b of the two systems' per-query values (scipy.stats)",
                                "rbo": "extrapolated rank-biased overlap, hardest first, p = 0.9 "
                                       "(Webber et al. 2010; pipeline.stats.rank)"})


def _of_either(study: StudyResult, first: str, second: str, lines_of) -> list[str]:
    """``lines_of(study, label)`` of both configurations, each line once: one both share as it is, one of a
    single configuration prefixed with its label."""
    a, b = lines_of(study, first), lines_of(study, second)
    return ([line for line in a if line in b] + [f"{first}: {line}" for line in a if line not in b]
            + [f"{second}: {line}" for line in b if line not in a])


def share_changes(first: dict, second: dict, queries: list[str], unit: str = "queries") -> dict[str, PairedShares]:
    """Per pair, the queries' membership in its whole intersection under the first and the second
    configuration, paired (both, first only, second only, neither)."""
    out = {}
    for pair in ("h2r&h2g", "h2r&h2j", "h2g&h2j"):
        a, b = pair_members(first, pair), pair_members(second, pair)
        out[pair] = PairedShares.of([q in a for q in queries], [q in b for q in queries], unit)
    return out


def _pair_unit(study: StudyResult, first: str, second: str, component: str) -> Unit | Part:
    """One pair of configurations: each pairwise share's change within the margin, jointly."""
    claim = claim_rule("structure_stable")
    measured = compare(study, first, second, component)
    # the second configuration by the one component it changes: the pair's scope fits a line
    scope = f"{study.dataset} · {component}: {first} → {study.configurations[second].components.to_dict()[component]}"
    lead = ["/".join(pair_name(k) for k in measured[side]) for side in ("largest_first", "largest_second")]
    agreement = measured["rank_agreement"]
    tau = "τ undefined" if agreement["kendall_tau"] is None else f"τ {agreement['kendall_tau']:.2f}"
    rbo = "RBO —" if agreement["rbo"] is None else f"RBO {agreement['rbo']:.2f}"
    context = f"largest {lead[0]} → {lead[1]}; {tau}, {rbo} over {agreement['n']} queries"
    shared = sorted(set(study.universe_ids(first)) & set(study.universe_ids(second)))
    gates = _of_either(study, first, second, context_gates)
    if not shared:
        return Part(scope, measured, INCONCLUSIVE if gates else UNMEASURABLE,
                    f"no query in both universes ({context})", {"n": 0, "inconclusive_because": gates})
    changes = share_changes(study.configurations[first].hard_in_universe,
                            study.configurations[second].hard_in_universe, shared, claim.counts)
    each = {pair_name(k): equivalence(v, claim) for k, v in changes.items()}
    measured["share_changes"] = {k: {"change": each[pair_name(k)].estimate, "interval": list(each[pair_name(k)].interval)}
                                 for k in changes}
    decision = joint(each, claim).gated(gates)
    extra = None
    if component == "generator":  # beside what drawing another sample of one generator changes
        within = _within_generator(study, first, second, measured)
        context += "; " + _within_generator_words(within)
        extra = {"within_generator": within}
    return Unit(scope, measured, decision, _of_either(study, first, second, model_lines), context=context,
                extra=extra)


def _within_generator(study: StudyResult, first: str, second: str, measured: dict) -> dict | None:
    """A change of generator beside one generator's sampling spread (:mod:`pipeline.study.sampling`): it says
    something only where it exceeds what drawing another sample of one generator changes. None: no stored
    sampling result bears on it."""
    a, b = study.configurations[first].components, study.configurations[second].components
    changes = {key: share["change"] for key, share in measured["pair_shares"].items()}
    return within_generator_evidence(study.dataset, [a.generator, b.generator], a.retriever, a.judge, a.setup,
                                     changes)


def _within_generator_words(within: dict | None) -> str:
    if within is None:
        return ("no stored H2G sampling result of either generator (python -m pipeline h2g-samples): the change "
                "is not set against drawing another sample")
    exceeding = sum(p["exceeds"] for p in within["pairs"].values())
    words = (f"{exceeding} of {len(within['pairs'])} share changes exceed their range across {within['n_samples']} "
             f"samples of {within['generator']}")
    if within["h2g_jaccard"] is not None:
        j = within["h2g_jaccard"]
        words += (f"; H2G Jaccard between the generators {j['jaccard_first']:.2f}, between samples "
                  f"{j['within']['min']:.2f}–{j['within']['max']:.2f}")
    return words
