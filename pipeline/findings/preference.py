"""``difficulty_aware_preferred``: the stored preference results against the paper's rates (the claims
file's ``rates``, :func:`paper_rates`: DL19 64.56%, DL20 75.40%, DL21 52.77%, DL22 60.49%; their one source).

Per dataset, its newest stored result (``pipeline.prompting.preference.list_results``), its figures
recomputed from the stored pairs (``preference.summarise``, the pair rule over queries: rate = wins /
decided queries), read by the claim's rule, a bound the inference core decides (:mod:`core.inference`):
it holds where the one-sided lower bound lies above 50% (the difficulty-aware answer preferred beyond
chance), does not hold where the upper bound lies below 50% (the baseline preferred; Holm across the
datasets), and is inconclusive where they straddle 50%, with the MDE and the n that would decide. Beside
the verdict: whether the paper's rate lies inside the page's 95% interval. Fewer decided queries than the
rule's ``min_n``, or a judge or generator that is sub-1B or of unknown size, make a dataset inconclusive.
"""
from __future__ import annotations

from core.inference.claims import Proportion, bound
from pipeline.findings.evidence import Unit, graded_parts
from pipeline.findings.finding import (INCONCLUSIVE, UNMEASURABLE, Finding, Part, claim_rule, finding, paper_claims,
                                       percent)
from pipeline.findings.scope import datasets_in_scope
from pipeline.llm.base import Provenance
from pipeline.prompting.difficulty import reasons_made_by


def paper_rates() -> dict[str, float]:
    """The study's preference rate for the difficulty-aware answer per dataset (its judge, its generators), as
    the claims file states them: the one source the findings, the Difficulty-aware page and ``prefer`` show."""
    return dict(paper_claims()["difficulty_aware_preferred"]["rates"])


def paper_rates_text() -> str:
    rates = paper_rates()
    return " / ".join(f"{100 * r:.2f}%" for r in rates.values()) + " (" + " / ".join(d.upper() for d in rates) + ")"


def result_record(result: dict, path: str) -> dict:
    models = [{"role": "judge", "label": result["judge"].get("label"), "digest": result["judge"].get("digest", "")}]
    models += [{"role": f"{side} generator", "label": p.get("label"), "digest": p.get("digest", "")}
               for side, p in result["generators"].items()]
    return {"kind": "preference", "dataset": result["dataset"], "id": result["id"], "path": path, "models": models}


def dataset_part(dataset: str) -> tuple[Unit | Part, dict | None]:
    """One dataset's newest preference result as a unit of the finding (before the family's correction)."""
    from pipeline.prompting import preference

    claim = claim_rule("difficulty_aware_preferred")
    paths = preference.list_results(dataset)
    paper = paper_rates().get(dataset)
    if not paths:
        return Part(dataset, {"paper_rate": paper}, UNMEASURABLE, f"no preference result for {dataset}"), None
    result = preference.load_result(paths[0])
    overall = preference.summarise(result["pairs"], result["judge"].get("label", ""))["overall"]
    low, high = overall["ci_low"], overall["ci_high"]
    measured = {"paper_rate": paper, "rate": overall["rate"], "ci_low": low, "ci_high": high,
                "decided": overall["decided"], "wins": overall["wins"], "ties": overall["ties"],
                "losses": overall["losses"], "sign_test_p": overall["sign_test_p"],
                "paper_inside_interval": None if paper is None or low is None else low <= paper <= high,
                "rule": result.get("rule", "")}
    record = result_record(result, str(paths[0]))
    interval = f"[{percent(low)}, {percent(high)}]" if low is not None else "[—]"
    text = (f"{percent(overall['rate'])}, 95% {interval} over {overall['decided']} queries "
            f"(paper {percent(paper)}" + ("" if measured["paper_inside_interval"] is None else
                                          f", {'inside' if measured['paper_inside_interval'] else 'outside'} that interval")
            + ")")
    models = {role: Provenance.from_dict(p) for role, p in [("judge", result["judge"]), *result["generators"].items()]}
    made_by = reasons_made_by(result.get("assignment_report"))  # the reasons the aware prompts carry
    if made_by:
        models[made_by[0]] = made_by[1]
    gates = [f"{role} is {m.evidence_gate}" for role, m in models.items() if m.evidence_gate]
    lines = [f"{role}: {m.label}, {m.size_text}" for role, m in models.items()]
    if not overall["decided"]:
        return Part(dataset, measured, INCONCLUSIVE if gates else UNMEASURABLE, f"no decided query ({text})",
                    {"n": 0, "models": lines, "inconclusive_because": gates}), record
    decision = bound(Proportion(overall["wins"], overall["decided"], claim.counts), claim).gated(gates)
    return Unit(dataset, measured, decision, lines, context=text), record


def difficulty_aware_preferred(dataset: str = "all") -> Finding:
    entries, rests = [], []
    for name in datasets_in_scope(dataset):
        entry, record = dataset_part(name)
        entries.append(entry)
        if record:
            rests.append(record)
    return finding("difficulty_aware_preferred", graded_parts(entries), rests_on=rests, paper=paper_rates_text(),
                   definitions={"rate": "wins / decided queries (pair rule, pipeline.prompting.pairwise.RATE_RULE)",
                                "interval": "the verdict: one-sided 95% Wilson bounds (a 90% interval); beside it, "
                                            "the Difficulty-aware page's 95% Wilson interval"})
