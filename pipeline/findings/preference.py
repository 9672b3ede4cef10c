"""``difficulty_aware_preferred``: the stored preference results against the paper's rates
(``pipeline.prompting.preference.STUDY_RATES``: DL19 64.56%, DL20 75.40%, DL21 52.77%, DL22 60.49%).

Per dataset, its newest stored result (``pipeline.prompting.preference.list_results``), its figures
recomputed from the stored pairs (``preference.summarise``, the pair rule over queries: rate = wins /
decided queries, 95% Wilson score interval). The claim holds where the interval lies above 50% (the
difficulty-aware answer preferred beyond chance); an interval reaching 50% or below does not show it.
Beside the verdict: whether the paper's rate lies inside our interval. Fewer than ``min_queries``
decided queries are too few for the test; a sub-1B judge or generator is not a finding.
"""
from __future__ import annotations

from pipeline.findings.finding import FAILS, HOLDS, UNMEASURABLE, Finding, Part, finding, paper_claims, percent
from pipeline.findings.scope import datasets_in_scope
from pipeline.llm.base import Provenance


def paper_rates_text() -> str:
    from pipeline.prompting.preference import STUDY_RATES

    return " / ".join(f"{100 * r:.2f}%" for r in STUDY_RATES.values()) + " (" + " / ".join(
        d.upper() for d in STUDY_RATES) + ")"


def result_record(result: dict, path: str) -> dict:
    models = [{"role": "judge", "label": result["judge"].get("label"), "digest": result["judge"].get("digest", "")}]
    models += [{"role": f"{side} generator", "label": p.get("label"), "digest": p.get("digest", "")}
               for side, p in result["generators"].items()]
    return {"kind": "preference", "dataset": result["dataset"], "id": result["id"], "path": path, "models": models}


def dataset_part(dataset: str) -> tuple[Part, dict | None]:
    from pipeline.prompting import preference

    paths = preference.list_results(dataset)
    paper = preference.STUDY_RATES.get(dataset)
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
    text = (f"{percent(overall['rate'])} {interval} over {overall['decided']} queries "
            f"(paper {percent(paper)}" + ("" if measured["paper_inside_interval"] is None else
                                          f", {'inside' if measured['paper_inside_interval'] else 'outside'} our interval")
            + ")")
    small = [role for role, p in [("judge", result["judge"]), *result["generators"].items()]
             if Provenance.from_dict(p).small]
    minimum = paper_claims()["difficulty_aware_preferred"]["min_queries"]
    if small:
        return Part(dataset, measured, UNMEASURABLE, f"a sub-1B {', '.join(small)} ({text})"), record
    if overall["decided"] < minimum:
        return Part(dataset, measured, UNMEASURABLE, f"too few queries for the test: {overall['decided']} decided, "
                                                     f"at least {minimum} ({text})"), record
    if low > 0.5:
        return Part(dataset, measured, HOLDS, f"preferred beyond chance: {text}"), record
    return Part(dataset, measured, FAILS, f"not preferred beyond chance (interval reaches 50%): {text}"), record


def difficulty_aware_preferred(dataset: str = "all") -> Finding:
    parts, rests = [], []
    for name in datasets_in_scope(dataset):
        part, record = dataset_part(name)
        parts.append(part)
        if record:
            rests.append(record)
    return finding("difficulty_aware_preferred", parts, rests_on=rests, paper=paper_rates_text(),
                   definitions={"rate": "wins / decided queries (pair rule, pipeline.prompting.pairwise.RATE_RULE)",
                                "interval": "95% Wilson score interval (scipy.stats.binomtest)"})
