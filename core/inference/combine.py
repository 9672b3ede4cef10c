"""A claim across configurations or datasets: every one, somewhere, or pooled (issue 40).

- **every** ("holds on every configuration"): an intersection-union test. Each unit's "holds" is read at
  the claim's level with no correction (the claim holds only when every unit's test rejects, so the family's
  chance of a false "holds" is at most alpha). Its opposite, "fails somewhere", is a union claim: each
  unit's "does not hold" is Holm-corrected across every test of the family (``statsmodels.stats.multitest``;
  a unit's parts, such as a configuration's three sets, are each one test of it). The family is what the
  finding reads, fixed by the claim's data, never shrunk by what produced no p-value.
- **somewhere** ("holds on at least one"): each unit's "holds" Holm-corrected across the units; "does not
  hold" needs every unit to fail at the level (an intersection-union test of the opposite).
- **pooled** ("across the four datasets"): one random-effects estimate over the units' estimates and
  standard errors (``statsmodels.stats.meta_analysis.combine_effects``, Paule-Mandel tau², which is never
  negative), read by the claim's rule, with its heterogeneity (Q, its p-value, I², tau²) beside.

API:

- ``every(decisions) -> list[Decision]``: the decisions with their opposite tests Holm-corrected; the whole's
  verdict is then :func:`core.findings.combine` of the parts (one that does not hold makes the whole not hold,
  one inconclusive leaves it inconclusive);
- ``somewhere(decisions) -> Somewhere``: ``decisions`` (with "holds" Holm-corrected), ``verdict``, ``reason``;
- ``pooled(estimates, claim) -> Decision``: ``estimates``: ``{unit: (value, se, n)}``; the decision's
  ``details["heterogeneity"]``: ``q``, ``q_p``, ``i2``, ``tau2``, ``k``, and ``details["units"]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy.stats import chi2
from statsmodels.stats.meta_analysis import combine_effects

from core.findings import FAILS, HOLDS, INCONCLUSIVE
from core.multiple_testing import holm_adjust
from core.inference.claims import Claim, Decision, Normal, decide, joint


def _holm(p_values: Sequence[float]) -> list[float]:
    return [float(p) for p in holm_adjust(list(p_values))] if p_values else []


def _leaves(decision: Decision) -> list[Decision]:
    return list(decision.components.values()) if decision.components else [decision]


def _corrected(leaf: Decision, p: float, m: int) -> Decision:
    raw = leaf.p_fails
    note = ""
    if raw < leaf.claim.alpha <= p:
        note = f"its opposite test's p {raw:.3g} is {p:.3g} after Holm across the family's {m} tests"
    out = leaf.with_p_fails(p, note)
    out.details = {**out.details, "p_fails_uncorrected": raw, "family_size": m}
    return out


def every(decisions: Sequence[Decision]) -> list[Decision]:
    """The decisions of a claim on every unit (module docstring): "holds" uncorrected, "does not hold"
    Holm-corrected across every test of the family (each part of a joint unit one test)."""
    leaves = [leaf for d in decisions for leaf in _leaves(d)]
    adjusted = iter(_holm([leaf.p_fails for leaf in leaves]))
    m = len(leaves)
    out = []
    for d in decisions:
        if not d.components:
            out.append(_corrected(d, next(adjusted), m))
            continue
        parts = {k: _corrected(leaf, next(adjusted), m) for k, leaf in d.components.items()}
        derived = joint(d.components, d.claim).gates  # the parts' own gates; the rest the caller's
        own = [g for g in d.gates if g not in derived]
        out.append(joint(parts, d.claim).gated(own))
    return out


@dataclass
class Somewhere:
    decisions: list
    verdict: str
    reason: str


def somewhere(decisions: Sequence[Decision]) -> Somewhere:
    """A claim that holds when it holds on at least one unit (module docstring)."""
    m = len(decisions)
    adjusted = []
    for d, p in zip(decisions, _holm([d.p_holds for d in decisions])):
        note = (f"its test's p {d.p_holds:.3g} is {p:.3g} after Holm across {m} units"
                if d.p_holds < d.claim.alpha <= p else "")
        adjusted.append(d.with_p_holds(p, note))
    verdicts = [d.verdict for d in adjusted]
    if HOLDS in verdicts:
        verdict = HOLDS
        reason = f"holds on {verdicts.count(HOLDS)} of {m} after Holm"
    elif verdicts and all(v == FAILS for v in verdicts):
        verdict, reason = FAILS, f"does not hold on any of {m}"
    else:
        verdict = INCONCLUSIVE
        reason = f"holds on none of {m} after Holm, and {verdicts.count(FAILS)} of {m} do not hold"
    return Somewhere(adjusted, verdict, reason)


def pooled(estimates: Mapping[str, tuple[float, float, int]], claim: Claim) -> Decision:
    """One random-effects estimate over ``{unit: (value, se, n)}``, decided by ``claim`` (module docstring)."""
    if len(estimates) < 2:
        raise ValueError(f"claim {claim.name}: a pooled estimate needs at least two units")
    values = np.array([v for v, _, _ in estimates.values()], dtype=float)
    variances = np.array([se ** 2 for _, se, _ in estimates.values()], dtype=float)
    if np.any(variances <= 0):
        raise ValueError(f"claim {claim.name}: every unit of a pooled estimate needs a positive standard error")
    result = combine_effects(values, variances, method_re="iterated")
    n = int(sum(k for _, _, k in estimates.values()))
    k = len(estimates)
    q = float(result.q)
    heterogeneity = {"k": k, "q": q, "q_p": float(chi2.sf(q, k - 1)), "i2": max(0.0, float(result.i2)),
                     "tau2": max(0.0, float(result.tau2)), "method": "random effects, Paule-Mandel tau² "
                                                                          "(statsmodels combine_effects)"}
    estimate = Normal(float(result.mean_effect_re), float(result.sd_eff_w_re), n, unit=claim.counts,
                      name="pooled z")
    decision = decide(estimate, claim)
    decision.details = {**decision.details, "heterogeneity": heterogeneity,
                        "units": {u: {"value": v, "se": se, "n": c} for u, (v, se, c) in estimates.items()}}
    decision.shown += (f"; heterogeneity Q {q:.2f} (p {heterogeneity['q_p']:.3g}), I² {heterogeneity['i2']:.0%}, "
                       f"tau² {heterogeneity['tau2']:.3g} over {k} units")
    return decision
