"""Per-query paired comparisons of two arms (e.g. a baseline prompt against a difficulty-aware one), and the
verdict rule the difficulty-aware studies share.

:func:`paired_comparison` takes one value per query for each arm (a judge's disagreement share with NIST,
a query's nDCG@10) over the queries both arms measured, and gives:

- the means and the mean change (after − before) with a seeded bootstrap percentile interval over queries;
- how many queries improved, stayed and worsened (``better`` says which direction is an improvement);
- the Wilcoxon signed-rank test on the exact changes (two-sided, zero differences dropped; the method scipy
  used is stored) and the exact two-sided sign test beside it, ties dropped (:mod:`core.inference.paired`:
  discrete values are tested as integer counts or exact rationals, never as rounded shares).

:func:`holm` adjusts the comparison family a study declares in advance (its ``COMPARISONS``): a comparison
without a p-value still counts, so the family never shrinks with the data.
:func:`comparison_verdict` grades one comparison under a rule (:data:`RULE`, data stored with every result):
``holds`` when the Holm-adjusted Wilcoxon p is under ``alpha`` and the mean change is an improvement;
``does not hold`` when the change's interval lies wholly on the side of no improvement (its better end
at most 0); otherwise ``inconclusive``; and always ``inconclusive`` with its reason first when a gate applies:
fewer than ``min_queries`` queries, or a model whose output cannot be a finding (sub-1B or unknown size,
:attr:`pipeline.llm.base.Provenance.evidence_gate`, or under the rule's ``min_parameters_b``).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from core.findings import FAILS, HOLDS, INCONCLUSIVE, Part
from core.inference import paired as inference
from pipeline.llm.base import Provenance

BETTER = ("higher", "lower")
# The difficulty-aware studies' rule (stored with every result and shown with its verdicts). min_queries:
# a year's hard set is about a quarter of its 43-54 judged queries, so 10 is the smallest set a paired test
# on one year reads; min_parameters_b: the smallest model whose output counts, as the study's models are
# served 3B-70B ones (the offline 1.5B stand-in exercises the pipeline; its output is not a finding).
RULE = {"statistic": "Wilcoxon signed-rank on exact per-query values (sign test beside it), Holm across the "
                     "study's declared family (a comparison without a p counts); mean change with a bootstrap "
                     "percentile interval over queries; the primary comparison, aware vs the same-length neutral "
                     "control, read first",
        "alpha": 0.05, "level": 0.95, "min_queries": 10, "min_parameters_b": 3.0, "resamples": 2000, "seed": 0,
        "correction": "holm"}


def paired_comparison(before: Mapping[str, object], after: Mapping[str, object], *, better: str = "higher",
                      level: float = RULE["level"], resamples: int = RULE["resamples"],
                      seed: int = RULE["seed"]) -> dict:
    """The paired comparison of ``after`` against ``before`` over the queries both hold (module docstring).
    Values are exact where the data are discrete (ints, :class:`fractions.Fraction`: a judge's disagreeing
    pairs out of its labelled pairs), so equal changes tie exactly (:mod:`core.inference.paired`)."""
    if better not in BETTER:
        raise ValueError(f"better must be one of {BETTER}, got {better!r}")
    qids = sorted(set(before) & set(after))
    exact_change = inference.differences([before[q] for q in qids], [after[q] for q in qids])
    change = np.array([float(c) for c in exact_change])
    sign = 1 if better == "higher" else -1
    improved = sum(sign * c > 0 for c in exact_change)
    worsened = sum(sign * c < 0 for c in exact_change)
    out = {"n": len(qids), "qids": qids, "better": better,
           "mean_before": float(np.mean([float(before[q]) for q in qids])) if qids else None,
           "mean_after": float(np.mean([float(after[q]) for q in qids])) if qids else None,
           "mean_change": float(sum(exact_change) / len(qids)) if qids else None, "change_interval": None,
           "level": level, "improved": improved, "unchanged": len(qids) - improved - worsened, "worsened": worsened,
           "wilcoxon": inference.wilcoxon(exact_change), "sign_test_p": inference.sign_test(improved, worsened),
           "resamples": resamples, "seed": seed}
    if qids:
        rng = np.random.default_rng(seed)
        means = change[rng.integers(0, len(qids), size=(resamples, len(qids)))].mean(axis=1)
        tail = (1.0 - level) / 2 * 100
        out["change_interval"] = [float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))]
    return out


def holm(family: Sequence[str], comparisons: Mapping[str, dict]) -> dict[str, float]:
    """``{name: Holm-adjusted Wilcoxon p}`` over the ``family`` declared in advance: a declared comparison
    without a p (no query changed) still counts (:func:`core.inference.paired.holm`)."""
    return inference.holm(family, {n: (c["wilcoxon"] or {}).get("p") for n, c in comparisons.items()})


def model_gates(models: Mapping[str, Provenance], rule: Mapping = RULE) -> list[str]:
    """Why the ``{role: provenance}`` models' output cannot be a finding under ``rule`` (none: it can)."""
    gates = []
    for role, model in models.items():
        if model.evidence_gate:
            gates.append(f"{role} is {model.evidence_gate}")
        elif model.parameters_b is not None and model.parameters_b < float(rule["min_parameters_b"]):
            gates.append(f"{role} is a {model.size_text} model, under the {rule['min_parameters_b']:g}B this "
                         f"study's rule asks: its output exercises the pipeline, it is not a finding")
    return gates


def rule_text(rule: Mapping = RULE) -> str:
    """The rule as the pages state it under a verdict table (a result's stored ``rule``)."""
    return (f"Rule: {rule['statistic']}; alpha {rule['alpha']}, at least {rule['min_queries']} queries and a "
            f"{rule['min_parameters_b']:g}B model.")


def not_a_finding(gates: Sequence[str]) -> str | None:
    """The label of a result whose models' ``gates`` keep it from being a finding, None without any."""
    return "Not a finding: " + "; ".join(gates) + "." if gates else None


def comparison_verdict(scope: str, comparison: Mapping, p_holm: float | None, gates: Sequence[str],
                       rule: Mapping = RULE, models: Sequence[str] = (), beyond: str | None = None) -> Part:
    """The verdict on "the second arm improves on the first" for one comparison (module docstring).
    ``beyond``: the arm a primary comparison is read against ("the control sentence"), so its text says
    whether the second arm has an effect beyond it."""
    w = comparison["wilcoxon"] or {}
    tests = ""
    if w.get("p") is not None:
        tests += f" · Wilcoxon W = {w['statistic']:g}, p = {w['p']:.3g} (Holm {p_holm:.3g})"
    if comparison["sign_test_p"] is not None:
        tests += f" · sign test {comparison['improved']}/{comparison['worsened']} p = {comparison['sign_test_p']:.3g}"
    return _verdict(scope, comparison, p_holm, "significant after Holm", tests, gates, rule, models, beyond)


def group_difference(first: Sequence, second: Sequence, *, better: str, rule: Mapping = RULE) -> dict:
    """Is the mean of ``first`` (per-query changes of one group) an improvement on that of ``second``? The
    difference in means (first - second, exact inputs) with a seeded bootstrap percentile interval (each group
    resampled within itself) and the two-sided permutation test, exact where small
    (:func:`core.inference.paired.two_groups`). Shaped like a comparison: ``n``, ``mean_change``,
    ``change_interval``, ``level``, ``better``, and ``test``."""
    if better not in BETTER:
        raise ValueError(f"better must be one of {BETTER}, got {better!r}")
    test = inference.two_groups(first, second, seed=int(rule["seed"]))
    out = {"n": min(len(first), len(second)), "n_first": len(first), "n_second": len(second), "better": better,
           "mean_change": test["difference"], "change_interval": None, "level": rule["level"], "test": test,
           "resamples": rule["resamples"], "seed": rule["seed"]}
    if first and second:
        rng = np.random.default_rng(rule["seed"])
        a, b = (np.array([float(v) for v in g]) for g in (first, second))
        means = (a[rng.integers(0, a.size, size=(rule["resamples"], a.size))].mean(axis=1)
                 - b[rng.integers(0, b.size, size=(rule["resamples"], b.size))].mean(axis=1))
        tail = (1.0 - rule["level"]) / 2 * 100
        out["change_interval"] = [float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))]
    return out


def interaction_verdict(scope: str, measured: Mapping, gates: Sequence[str], rule: Mapping = RULE,
                        models: Sequence[str] = ()) -> Part:
    """The verdict on "the change is a larger improvement in the first group than in the second"
    (:func:`group_difference`; the rule's alpha, outside the Holm family; n is the smaller group)."""
    test = measured["test"]
    tests = (f" · {test['method']} p = {test['p']:.3g} ({measured['n_first']} vs {measured['n_second']} queries)"
             if test.get("p") is not None else f" · no test: {test.get('reason', 'no query')}")
    return _verdict(scope, measured, test.get("p"), "significant", tests, gates, rule, models, None)


def _verdict(scope: str, measured: Mapping, p: float | None, significant: str, tests: str, gates: Sequence[str],
             rule: Mapping, models: Sequence[str], beyond: str | None) -> Part:
    """The one decision of both verdicts: holds when ``p`` is under alpha and the change is an improvement;
    does not hold when its interval lies wholly on the side of no improvement; else inconclusive; gates first."""
    n, change, interval = measured["n"], measured["mean_change"], measured["change_interval"]
    gates = list(gates)
    if n < int(rule["min_queries"]):
        gates.insert(0, f"n = {n} < minimum {rule['min_queries']}")
    sign = 1.0 if measured["better"] == "higher" else -1.0
    shown = (f"mean change {change:+.3f} [{interval[0]:+.3f}, {interval[1]:+.3f}] ({measured['level']:.0%} "
             f"bootstrap)" if interval else "no query measured by both arms") + tests
    if interval is None:
        on_figures, text = INCONCLUSIVE, "no query measured by both arms"
    elif p is not None and p < float(rule["alpha"]) and sign * change > 0:
        on_figures, text = HOLDS, f"the change is an improvement and {significant}"
    elif max(sign * interval[0], sign * interval[1]) <= 0:
        on_figures, text = FAILS, "the change's interval lies wholly on the side of no improvement"
    else:
        on_figures, text = INCONCLUSIVE, f"not {significant} and the interval admits an improvement"
    if beyond:
        text = {HOLDS: f"an effect beyond {beyond}: ", FAILS: f"no effect beyond {beyond}: ",
                INCONCLUSIVE: f"no effect beyond {beyond} shown: "}[on_figures] + text
    evidence = {"n": n, "shown": shown, "interval": interval, "level": measured["level"], "models": list(models),
                "on_its_figures": on_figures, "inconclusive_because": list(gates)}
    if gates:
        return Part(scope, dict(measured), INCONCLUSIVE, f"{'; '.join(gates)} (on its figures: {on_figures}: "
                                                         f"{text})", evidence)
    if on_figures == INCONCLUSIVE:
        evidence["inconclusive_because"] = [text]
    return Part(scope, dict(measured), on_figures, text, evidence)
