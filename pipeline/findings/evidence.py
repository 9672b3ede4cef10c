"""What a verdict rests on and when the evidence cannot carry one (issue 33).

Each claim's rule is data beside the claim (``paper_claims.json``: statistic, ``min_n``, threshold,
level, correction); this module reads a configuration's figures by that rule:

- the statistics: :func:`against_bound` and :func:`against_band` read a Wilson score interval
  (:func:`pipeline.prompting.pairwise.wilson_interval`, the project's one) against a threshold or a band;
  :func:`largest_pair_bootstrap` and :func:`share_change_bootstrap` resample the universe's queries
  (seeded; the hard sets are held as drawn, only the sampling of queries varies);
- the family's correction (:func:`family_level`): Bonferroni across the m units a finding reads, since
  one unit that contradicts a claim makes the whole not hold;
- the gates (:func:`configuration_gates`): what makes a measured configuration inconclusive whatever its
  figures say: n below the claim's minimum, a universe under half of the judged queries (the study's
  :class:`pipeline.study.universe.UniverseSummary` warning), a model that is sub-1B or of unknown size
  (:attr:`pipeline.llm.base.Provenance.evidence_gate`, recorded per configuration by
  :func:`pipeline.study.run.configuration_result`);
- :func:`graded`: the part, with its evidence (n, statistic, interval or test, models with their sizes)
  and, when a gate applies, ``inconclusive`` with the gates first and what its figures alone say after.
"""
from __future__ import annotations

from itertools import combinations
from typing import Mapping, Sequence

import numpy as np

from pipeline.findings.finding import FAILS, HOLDS, INCONCLUSIVE, Part, percent
from pipeline.prompting.pairwise import wilson_interval
from pipeline.sets.overlap import TASKS, region_name
from pipeline.study.result import StudyResult

STRADDLES = "the interval straddles the threshold"


def family_level(rule: Mapping, m: int) -> float:
    """Each unit's confidence level under the rule's correction over a family of ``m`` units (Bonferroni:
    1 - (1 - level) / m; ``none``: the level)."""
    level = float(rule.get("level", 0.95))
    if rule.get("correction", "none") == "bonferroni" and m > 1:
        return 1.0 - (1.0 - level) / m
    return level


def family_threshold(rule: Mapping, m: int) -> float:
    """A bootstrap support threshold under the rule's correction (Bonferroni: 1 - (1 - threshold) / m)."""
    threshold = float(rule["threshold"])
    if rule.get("correction", "none") == "bonferroni" and m > 1:
        return 1.0 - (1.0 - threshold) / m
    return threshold


def against_bound(interval: Sequence[float], bound: float) -> str:
    """"under ``bound``": holds when the upper end is under it, does not hold when the lower end reaches it."""
    low, high = interval
    return HOLDS if high < bound else FAILS if low >= bound else INCONCLUSIVE


def against_band(interval: Sequence[float], low: float, high: float) -> str:
    """"within [low, high]": holds when the interval lies inside, does not hold when it is disjoint from it."""
    a, b = interval
    if low <= a and b <= high:
        return HOLDS
    return FAILS if b < low or a > high else INCONCLUSIVE


def interval_text(interval: Sequence[float] | None, level: float) -> str:
    if interval is None:
        return "no interval"
    return f"Wilson {level:.1%} [{percent(interval[0])}, {percent(interval[1])}]"


def _membership(sets: Mapping[str, Sequence[str]], queries: Sequence[str]) -> dict[str, np.ndarray]:
    """Per pair of the paper's sets, a boolean per query of ``queries``: whether it is in both."""
    members = {t: set(sets[t]) for t in TASKS}
    return {region_name((a, b)): np.array([q in members[a] and q in members[b] for q in queries])
            for a, b in combinations(TASKS, 2)}


def largest_pair_bootstrap(sets: Mapping[str, Sequence[str]], universe: Sequence[str], target: str, *,
                           resamples: int, seed: int) -> dict:
    """The share of ``resamples`` bootstrap samples of the universe's queries in which ``target`` is strictly
    the largest pair, and the share in which another pair is strictly larger than it (ties: neither)."""
    queries = sorted(universe)
    both = _membership(sets, queries)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(queries), size=(resamples, len(queries)))
    counts = {pair: inside[picks].sum(axis=1) for pair, inside in both.items()}
    others = np.max([c for pair, c in counts.items() if pair != target], axis=0)
    return {"resamples": resamples, "seed": seed, "n": len(queries),
            "target_largest": float(np.mean(counts[target] > others)),
            "another_larger": float(np.mean(others > counts[target]))}


def share_change_bootstrap(first: Mapping[str, Sequence[str]], second: Mapping[str, Sequence[str]],
                           queries: Sequence[str], *, level: float, resamples: int, seed: int) -> dict:
    """Per pair, the change of its share |A ∩ B| / N (second minus first) over ``queries`` (those both
    configurations' universes hold) and its paired-bootstrap percentile interval at ``level``."""
    queries = sorted(queries)
    a, b = _membership(first, queries), _membership(second, queries)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(queries), size=(resamples, len(queries)))
    tail = (1.0 - level) / 2 * 100
    out = {}
    for pair in a:
        change = (b[pair].astype(float) - a[pair].astype(float))
        resampled = change[picks].mean(axis=1)
        low, high = np.percentile(resampled, [tail, 100 - tail])
        out[pair] = {"change": float(change.mean()), "interval": [float(low), float(high)]}
    return out


def model_lines(study: StudyResult, label: str) -> list[str]:
    """``generator: imported:planted, unknown size``: each LLM of a configuration with its size, as every
    verdict's headline names them."""
    from pipeline.llm.base import Provenance

    config = study.configurations[label]
    models = {"generator": study.generator(label).provenance, "judge": study.judge(label).provenance}
    lines = [f"{role}: {Provenance.from_dict(p).label}, {Provenance.from_dict(p).size_text}"
             for role, p in models.items() if isinstance(p, Mapping) and p]
    return lines + [f"{task}: gated ({why})" for task, why in (config.gated or {}).items() if task not in models]


def n_gate(n: int, rule: Mapping, of: str = "") -> list[str]:
    """``["n = 6 < minimum 30"]`` when ``n`` is under the rule's minimum (``of``: what was counted)."""
    return [f"n = {n} < minimum {rule['min_n']}" + (f" ({of})" if of else "")] if n < rule["min_n"] else []


def context_gates(study: StudyResult, label: str) -> list[str]:
    """The gates of a configuration that do not depend on the claim: a universe under half of the judged
    queries, each gated model (sub-1B or of unknown size)."""
    gates = []
    universe = study.universe_summary(label)
    if universe.warning:
        gates.append(f"a universe under half of the judged queries ({universe.n_common} of {universe.n_judged})")
    return gates + [f"{role} is {why}" for role, why in study.model_gates(label).items()]


def configuration_gates(study: StudyResult, label: str, rule: Mapping) -> list[str]:
    """Why one configuration's figures cannot carry a verdict under ``rule`` (none: they can), in the order
    a headline names them: n below the minimum, a universe under half of the judged queries, each gated model."""
    return n_gate(study.configurations[label].analysis["n_queries"], rule) + context_gates(study, label)


def graded(scope: str, measured: dict, verdict: str, text: str, evidence: dict, gates: list[str], *,
           unsure: str = STRADDLES) -> Part:
    """The part of one configuration: its figures' verdict, or ``inconclusive`` with the gates first (what the
    figures alone say is kept, in the reason and as ``evidence["on_its_figures"]``); ``unsure``: why figures
    that pass every gate are still inconclusive (the statistic's own word for it)."""
    evidence = {**evidence, "on_its_figures": verdict, "inconclusive_because": list(gates)}
    if gates:
        return Part(scope, measured, INCONCLUSIVE, f"{'; '.join(gates)} (on its figures: {verdict}: {text})",
                    evidence)
    if verdict == INCONCLUSIVE:
        evidence["inconclusive_because"] = [unsure]
        return Part(scope, measured, INCONCLUSIVE, f"{unsure}: {text}", evidence)
    return Part(scope, measured, verdict, text, evidence)
