"""Claim types declared as data, and one decision rule per type (issue 40).

A claim's rule is data (a claims file's ``rule``: type, statistic, threshold and side or margin, level, scope,
how configurations or datasets combine, the comparison family, the minimum n and what it counts); what was
measured is an *estimate* that can be tested against a value; a decision function reads one by the other.
Every rule reads one-sided tests at the claim's level (alpha = 1 - level): ``p_holds`` is the p-value of the
test whose rejection shows the claim, ``p_fails`` of the one whose rejection shows its opposite; a verdict is
``holds`` when ``p_holds < alpha``, ``does not hold`` when ``p_fails < alpha``, else ``inconclusive`` (never
"does not hold" on non-significance). Intervals are the matching one-sided bounds at the level (so a
two-sided ``1 - 2 alpha`` interval), and agree with the tests.

- **bound** ("under 10%", side ``below``; "at least 0.76", side ``above``): holds when the one-sided bound on
  the claim's side lies on its side of the threshold, does not hold when the opposite one-sided bound
  excludes it, else inconclusive.
- **equivalence** ("about half", "comparable", a ``margin`` [low, high]): two one-sided tests (TOST); holds
  when the ``1 - 2 alpha`` interval lies inside the margin, does not hold when it lies wholly outside, else
  inconclusive, and then "consistent with the paper" when the estimate lies within the margin.
- **order** ("X is largest"): X against each competitor on paired data; holds when X beats each (an
  intersection-union test: no correction), does not hold when one beats X (Holm across the competitors),
  else inconclusive, naming the tied group.
- **effect** ("A beats B by d"): the direction (one-sided test against 0, the verdict) and the magnitude (the
  two-sided interval at the level against the paper's figure: ``contains``, ``below``, ``above``), apart.

A decision whose n is under the claim's ``min_n`` (counted as the claim's ``counts`` says: the estimate's own
n, so a set's share is gated by the set's size) is inconclusive with that reason first; so is one a caller
gates (:meth:`Decision.gated`: a small model, a thin universe); what its figures alone say is kept. Every
decision carries its power (:mod:`core.inference.power`), shown when it is inconclusive.

API:

- ``Claim`` (``Claim.from_rule(name, rule)``; ``claim.at(key)`` for a per-figure threshold), ``TYPES``;
- estimates: ``Proportion(k, n)`` (Wilson bounds, score tests: statsmodels), ``Mean(values)`` (t, by
  ``core.inference.summary.PairedT`` on the values' summary; a paired change is the mean of per-unit differences),
  ``Normal(value, se, n)``
  (z; a pooled estimate), ``Sign(wins, losses, n)`` (exact sign test on the discordant units, scipy; tested
  against 0 only). Each has ``value``, ``n``, ``unit``, ``bounds(level)``, ``p_above(x)``, ``p_below(x)``,
  ``sd_at(x)``, ``name``, ``scale``;
- decisions: ``bound(estimate, claim)``, ``equivalence(estimate, claim)``, ``order(subject, {competitor:
  estimate of subject minus it}, claim)``, ``effect(estimate, claim, paper=None)``, ``decide(estimate, claim)``
  (bound, equivalence, effect by the claim's type), ``joint({name: decision}, claim)`` (every one of a unit's
  parts must hold);
- ``Decision``: ``verdict``, ``words``, ``n``, ``estimate``, ``interval``, ``p_holds``, ``p_fails``, ``shown``,
  ``power``, ``consistent``, ``tied``, ``magnitude``, ``components``, ``gates``, ``on_its_figures``;
  ``gated(reasons)``, ``with_p_fails(p, note)`` / ``with_p_holds(p, note)`` (a family's correction, see
  :mod:`core.inference.combine`), ``evidence()`` (a finding part's evidence: n, test, interval, threshold,
  power when inconclusive), ``reason()``;
- ``verdict_of(p_holds, p_fails, level)``, ``fmt(value, scale)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping, Protocol, Sequence

import numpy as np
from scipy.stats import binomtest, norm
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from core.findings import FAILS, HOLDS, INCONCLUSIVE
from core.inference.power import Power, mde, n_to_decide
from core.inference.summary import PairedT

BOUND, EQUIVALENCE, ORDER, EFFECT = "bound", "equivalence", "order", "effect"
TYPES = (BOUND, EQUIVALENCE, ORDER, EFFECT)
BELOW, ABOVE = "below", "above"


@dataclass(frozen=True)
class Claim:
    """A claim's rule as data (module docstring). ``threshold``: a bound's limit (or ``{figure: limit}``, read
    with :meth:`at`); ``side``: ``below`` (the claim is "under") or ``above``; ``margin``: an equivalence's
    [low, high]; ``target``: an effect's paper figure; ``combine``: ``every`` (intersection-union, no
    correction for "holds"), ``somewhere`` (Holm), ``pooled`` (a meta-analytic estimate), ``each`` (one
    unit); ``family``: what the family's correction runs over, in words; ``counts``: what ``min_n`` counts."""
    name: str
    type: str
    statistic: str = ""
    level: float = 0.95
    threshold: float | Mapping[str, float] | None = None
    side: str = BELOW
    margin: tuple[float, float] | None = None
    target: float | None = None
    scope: str = ""
    combine: str = "every"
    family: str = ""
    min_n: int = 0
    counts: str = "units"
    scale: str = "percent"  # how figures print: "percent" (shares) or "plain"

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"claim {self.name}: unknown type {self.type!r} (one of {', '.join(TYPES)})")
        if self.side not in (BELOW, ABOVE):
            raise ValueError(f"claim {self.name}: unknown side {self.side!r}")
        if not 0.5 < self.level < 1:
            raise ValueError(f"claim {self.name}: level {self.level} is not in (0.5, 1)")
        if self.type == EQUIVALENCE and (self.margin is None or self.margin[0] >= self.margin[1]):
            raise ValueError(f"claim {self.name}: an equivalence needs a margin [low, high] with low < high")
        if self.type == BOUND and self.threshold is None:
            raise ValueError(f"claim {self.name}: a bound needs a threshold")

    @property
    def alpha(self) -> float:
        return 1.0 - self.level

    @classmethod
    def from_rule(cls, name: str, rule: Mapping) -> "Claim":
        """The claim a claims file's ``rule`` declares (keys as the fields; unknown keys are the file's own
        words, kept there)."""
        margin = rule.get("margin")
        return cls(name, rule["type"], statistic=rule.get("statistic", ""), level=float(rule.get("level", 0.95)),
                   threshold=rule.get("threshold"), side=rule.get("side", BELOW),
                   margin=None if margin is None else (float(margin[0]), float(margin[1])),
                   target=rule.get("target"), scope=rule.get("scope", ""), combine=rule.get("combine", "every"),
                   family=rule.get("family", ""), min_n=int(rule.get("min_n", 0)), counts=rule.get("counts", "units"),
                   scale=rule.get("scale", "percent"))

    def at(self, key: str) -> "Claim":
        """This claim with the threshold of figure ``key`` (a per-figure threshold ``{figure: limit}``)."""
        return replace(self, threshold=self.threshold[key]) if isinstance(self.threshold, Mapping) else self


def fmt(value: float | None, scale: str = "percent") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{100 * value:.1f}%" if scale == "percent" else f"{value:+.3g}" if scale == "signed" else f"{value:.3g}"


class Estimate(Protocol):
    value: float
    n: int
    unit: str
    name: str

    def bounds(self, level: float) -> tuple[float, float]: ...
    def p_above(self, x: float) -> float: ...
    def p_below(self, x: float) -> float: ...
    def sd_at(self, x: float) -> float: ...


@dataclass(frozen=True)
class Proportion:
    """``k`` of ``n``: Wilson score bounds and the score test they invert (statsmodels), so a bound excludes a
    value exactly when the test rejects it."""
    k: int
    n: int
    unit: str = "units"
    name: str = "Wilson"

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else math.nan

    def bounds(self, level: float) -> tuple[float, float]:
        if not self.n:
            return 0.0, 1.0
        low, high = proportion_confint(self.k, self.n, alpha=2 * (1 - level), method="wilson")
        return max(0.0, float(low)), min(1.0, float(high))

    def p_above(self, x: float) -> float:
        """H0: share <= x, against share > x."""
        if not self.n or x >= 1:
            return 1.0
        if x <= 0:
            return 0.0 if self.k else 1.0
        return float(proportions_ztest(self.k, self.n, value=x, alternative="larger", prop_var=x)[1])

    def p_below(self, x: float) -> float:
        if not self.n or x <= 0:
            return 1.0
        if x >= 1:
            return 0.0 if self.k < self.n else 1.0
        return float(proportions_ztest(self.k, self.n, value=x, alternative="smaller", prop_var=x)[1])

    def sd_at(self, x: float) -> float:
        x = min(max(x, 1e-9), 1 - 1e-9)
        return math.sqrt(x * (1 - x))

    def figures(self, scale: str = "percent") -> str:
        return f"{self.k} of {self.n}"


@dataclass(frozen=True)
class Mean:
    """The mean of per-unit values (a paired change: of per-unit differences): t bounds and t tests, read from the
    values' mean, SD and count by :class:`core.inference.summary.PairedT` (one Student-t for values and stored
    summaries alike; checked against statsmodels' ``DescrStatsW``); values all equal are known exactly (bounds the
    value, p 0 or 1)."""
    values: Sequence[float]
    unit: str = "units"
    name: str = "t"

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def value(self) -> float:
        return float(np.mean(self.values)) if self.n else math.nan

    @property
    def sd(self) -> float:
        return float(np.std(self.values, ddof=1)) if self.n > 1 else 0.0

    @property
    def _t(self) -> PairedT:
        return PairedT(self.value, self.sd, self.n, self.unit, self.name)

    def bounds(self, level: float) -> tuple[float, float]:
        return self._t.bounds(level)

    def p_above(self, x: float) -> float:
        return self._t.p_above(x)

    def p_below(self, x: float) -> float:
        return self._t.p_below(x)

    def sd_at(self, x: float) -> float:
        return self.sd

    def figures(self, scale: str = "percent") -> str:
        return f"mean {fmt(self.value, scale)}"


@dataclass(frozen=True)
class Normal:
    """An estimate with a known standard error (a pooled estimate): z bounds and z tests."""
    value: float
    se: float
    n: int
    unit: str = "units"
    name: str = "z"

    def bounds(self, level: float) -> tuple[float, float]:
        z = norm.ppf(level)
        return self.value - z * self.se, self.value + z * self.se

    def p_above(self, x: float) -> float:
        if self.se == 0:
            return 0.0 if self.value > x else 1.0
        return float(norm.sf((self.value - x) / self.se))

    def p_below(self, x: float) -> float:
        if self.se == 0:
            return 0.0 if self.value < x else 1.0
        return float(norm.cdf((self.value - x) / self.se))

    def sd_at(self, x: float) -> float:
        return self.se * math.sqrt(max(self.n, 1))

    def figures(self, scale: str = "percent") -> str:
        return f"{fmt(self.value, scale)} (se {fmt(self.se, scale)})"


@dataclass(frozen=True)
class Sign:
    """A paired comparison of two 0/1 memberships over ``n`` units: ``wins`` units have the first and not the
    second, ``losses`` the second and not the first. The value is the difference of the two shares; it is
    tested against 0 by the exact sign test on the discordant units (``scipy.stats.binomtest``, p 0.5), and
    its bounds are the matching one-sided Clopper-Pearson bounds of the wins' share among them, on the
    difference's scale. Discrete data tested as discrete."""
    wins: int
    losses: int
    n: int
    unit: str = "units"
    name: str = "exact sign test"

    @property
    def discordant(self) -> int:
        return self.wins + self.losses

    @property
    def value(self) -> float:
        return (self.wins - self.losses) / self.n if self.n else math.nan

    def _share(self, share: float) -> float:
        return (2 * share - 1) * self.discordant / self.n

    def bounds(self, level: float) -> tuple[float, float]:
        if not self.discordant:
            return 0.0, 0.0
        low = binomtest(self.wins, self.discordant, 0.5, alternative="greater").proportion_ci(level, "exact").low
        high = binomtest(self.wins, self.discordant, 0.5, alternative="less").proportion_ci(level, "exact").high
        return self._share(low), self._share(high)

    def _check(self, x: float):
        if x != 0:
            raise ValueError("the sign test reads a paired difference against 0 only")

    def p_above(self, x: float) -> float:
        self._check(x)
        return float(binomtest(self.wins, self.discordant, 0.5, alternative="greater").pvalue) if self.discordant else 1.0

    def p_below(self, x: float) -> float:
        self._check(x)
        return float(binomtest(self.wins, self.discordant, 0.5, alternative="less").pvalue) if self.discordant else 1.0

    def sd_at(self, x: float) -> float:
        return math.sqrt(max(self.discordant / self.n - self.value ** 2, 0.0)) if self.n else 0.0

    def figures(self, scale: str = "percent") -> str:
        return f"{self.wins} vs {self.losses} of {self.n}"


def verdict_of(p_holds: float, p_fails: float, level: float) -> str:
    alpha = 1.0 - level
    return HOLDS if p_holds < alpha else FAILS if p_fails < alpha else INCONCLUSIVE


@dataclass
class Decision:
    """One claim read on one estimate (or a unit's parts, ``components``): module docstring. ``texts``: the
    words of each verdict (so a family's correction can change the verdict and keep the words right);
    ``interval``: the one-sided bounds at the level; ``notes``: what a correction did."""
    claim: Claim
    verdict: str
    n: int | dict
    estimate: float | None
    interval: tuple[float, float] | None
    p_holds: float
    p_fails: float
    texts: dict
    shown: str
    power: Power | None = None
    consistent: bool | None = None
    tied: tuple = ()
    magnitude: str | None = None
    components: dict = field(default_factory=dict)
    gates: list = field(default_factory=list)
    on_its_figures: str | None = None
    notes: list = field(default_factory=list)
    details: dict = field(default_factory=dict)
    brief: str = ""  # the figures and their bounds ("2 of 11 [6.2%, 42.7%]"), as a unit's parts list them
    versus: str = ""  # what they are read against ("vs < 10.0%", "vs 40.0% to 60.0%")
    method: str = ""  # how ("Wilson one-sided 95% bounds", "Wilson one-sided 95% bounds, TOST")

    @property
    def words(self) -> str:
        return self.texts[self.on_its_figures or self.verdict]

    def _figures_verdict(self) -> str:
        if self.components:
            return _every_verdict([c.on_its_figures or c.verdict for c in self.components.values()])
        return verdict_of(self.p_holds, self.p_fails, self.claim.level)

    def _renewed(self, **changes) -> "Decision":
        out = replace(self, **changes)
        figures = out._figures_verdict()
        if out.gates:
            out.verdict, out.on_its_figures = INCONCLUSIVE, figures
        else:
            out.verdict, out.on_its_figures = figures, None
        return out

    def gated(self, reasons: Sequence[str]) -> "Decision":
        """Inconclusive whatever the figures say, for ``reasons`` (kept first; the figures' verdict kept beside)."""
        reasons = [r for r in reasons if r and r not in self.gates]
        return self._renewed(gates=[*self.gates, *reasons]) if reasons else self

    def with_p_fails(self, p: float, note: str = "") -> "Decision":
        """The decision with its opposite test's p corrected for a family (``note``: how)."""
        return self._renewed(p_fails=p, notes=[*self.notes, note] if note else self.notes)

    def with_p_holds(self, p: float, note: str = "") -> "Decision":
        return self._renewed(p_holds=p, notes=[*self.notes, note] if note else self.notes)

    def reason(self) -> str:
        """``<gates> (on its figures: <verdict>: <words>)``, or the words, with the shown figures."""
        text = f"{self.words}: {self.shown}" if self.shown else self.words
        if self.notes:
            text += f" ({'; '.join(self.notes)})"
        if self.gates:
            return f"{'; '.join(self.gates)} (on its figures: {self.on_its_figures}: {text})"
        return text

    def power_text(self) -> str:
        return self.power.text() if self.power is not None else ""

    def evidence(self) -> dict:
        """What a finding part's evidence holds (``core.findings.Part``): n, the test and its p-values, the
        interval, threshold or margin, the level, ``shown``, and when inconclusive the power (MDE, n to decide)
        and ``inconclusive_because``."""
        c = self.claim
        out = {"n": self.n, "unit": c.counts, "type": c.type, "statistic": c.statistic, "level": c.level,
               "estimate": self.estimate, "interval": None if self.interval is None else list(self.interval),
               "p_holds": self.p_holds, "p_fails": self.p_fails, "shown": self.shown,
               "on_its_figures": self.on_its_figures or self.verdict, "inconclusive_because": list(self.gates)}
        if c.type == BOUND:
            out.update(threshold=c.threshold, side=c.side)
        if c.type == EQUIVALENCE:
            out.update(margin=list(c.margin), consistent=self.consistent)
        if c.type == ORDER:
            out["tied"] = list(self.tied)
        if c.type == EFFECT:
            out.update(target=c.target, magnitude=self.magnitude)
        if self.notes:
            out["correction"] = list(self.notes)
        if self.components:
            out["components"] = {k: d.evidence() for k, d in self.components.items()}
        if self.verdict == INCONCLUSIVE:
            if not self.gates:
                out["inconclusive_because"] = [self.texts[INCONCLUSIVE]]
            # the power of figures that decide nothing (a gated part whose figures decide needs no more n)
            if self.power is not None and self._figures_verdict() == INCONCLUSIVE:
                out["power"] = self.power.to_dict()
                out["decides"] = self.power.text()
        out.update(self.details)
        return out


def _every_verdict(verdicts: Sequence[str]) -> str:
    return FAILS if FAILS in verdicts else INCONCLUSIVE if INCONCLUSIVE in verdicts else HOLDS


def _n_gate(claim: Claim, n: int) -> list[str]:
    return [f"n = {n} < minimum {claim.min_n} ({claim.counts})"] if n < claim.min_n else []


def _made(claim: Claim, estimate, p_holds: float, p_fails: float, texts: dict, versus: str,
          power: Power | None, test: str = "", **extra) -> Decision:
    """A leaf decision: its figures with their one-sided bounds (``brief``), read ``versus`` a threshold or
    margin; ``test``: words after the bounds' name ("TOST")."""
    low, high = estimate.bounds(claim.level)
    brief = f"{estimate.figures(claim.scale)} [{fmt(low, claim.scale)}, {fmt(high, claim.scale)}]"
    method = f"{estimate.name} one-sided {claim.level:.0%} bounds" + (f", {test}" if test else "")
    decision = Decision(claim, verdict_of(p_holds, p_fails, claim.level), estimate.n, estimate.value, (low, high),
                        p_holds, p_fails, texts, f"{brief} {versus} ({method})", power, brief=brief, versus=versus,
                        method=method, **extra)
    return decision.gated(_n_gate(claim, estimate.n))


def bound(estimate: Estimate, claim: Claim) -> Decision:
    """A bound claim (module docstring): under (``side`` below) or over (above) ``claim.threshold``."""
    t, s = float(claim.threshold), claim.scale
    below = claim.side == BELOW
    p_holds = estimate.p_below(t) if below else estimate.p_above(t)
    p_fails = estimate.p_above(t) if below else estimate.p_below(t)
    word, other = ("under", "at or above") if below else ("above", "at or below")
    texts = {HOLDS: f"{word} {fmt(t, s)}", FAILS: f"{other} {fmt(t, s)}",
             INCONCLUSIVE: f"the interval straddles {fmt(t, s)}"}
    power = _power(estimate, claim, t, f"the threshold {fmt(t, s)}")
    return _made(claim, estimate, p_holds, p_fails, texts, f"vs {'<' if below else '>'} {fmt(t, s)}", power)


def _power(estimate: Estimate, claim: Claim, at: float, against: str) -> Power:
    """The test's reach at its n against ``at`` (the threshold, a margin's edge, 0): the MDE, and the n that
    would see the estimate's distance from it."""
    sd = estimate.sd_at(at)
    return Power(mde(sd, estimate.n, claim.level), estimate.n, n_to_decide(sd, estimate.value - at, claim.level),
                 against, claim.counts, scale="percent" if claim.scale == "percent" else "plain")


def equivalence(estimate: Estimate, claim: Claim) -> Decision:
    """An equivalence claim by TOST within ``claim.margin`` (module docstring)."""
    low, high = claim.margin
    s, value = claim.scale, estimate.value
    p_holds = max(estimate.p_above(low), estimate.p_below(high))
    p_fails = min(estimate.p_below(low), estimate.p_above(high))
    consistent = bool(low <= value <= high) if not math.isnan(value) else None
    band = f"{fmt(low, s)} to {fmt(high, s)}"
    texts = {HOLDS: f"inside {band}", FAILS: f"wholly outside {band}",
             INCONCLUSIVE: f"the interval straddles an edge of {band}"
             + ("; consistent with the paper (the estimate lies within the margin)" if consistent else
                "; the estimate lies outside the margin" if consistent is False else "")}
    edge = low if (value - low) <= (high - value) else high
    power = _power(estimate, claim, edge, f"the margin's edge {fmt(edge, s)}")
    return _made(claim, estimate, p_holds, p_fails, texts, f"vs {band}", power, "TOST", consistent=consistent)


def effect(estimate: Estimate, claim: Claim, paper: float | None = None) -> Decision:
    """An effect claim (module docstring): the direction (``side`` above: the estimate > 0) is the verdict;
    the magnitude (``contains``/``below``/``above``: where the two-sided interval at the level lies against the
    paper's figure ``paper`` or ``claim.target``) is reported beside it."""
    paper = claim.target if paper is None else paper
    s = claim.scale
    above = claim.side == ABOVE
    p_holds = estimate.p_above(0.0) if above else estimate.p_below(0.0)
    p_fails = estimate.p_below(0.0) if above else estimate.p_above(0.0)
    two_sided = estimate.bounds(1 - claim.alpha / 2)
    magnitude = None
    if paper is not None:
        magnitude = "below" if two_sided[1] < paper else "above" if two_sided[0] > paper else "contains"
    direction = "ahead" if above else "behind"
    texts = {HOLDS: f"the direction replicates ({direction}, one-sided p {p_holds:.3g})",
             FAILS: f"the opposite direction (one-sided p {p_fails:.3g})",
             INCONCLUSIVE: f"no direction shown (one-sided p {p_holds:.3g})"}
    size = (f"{claim.level:.0%} interval [{fmt(two_sided[0], s)}, {fmt(two_sided[1], s)}]")
    if magnitude is not None:
        size += {"contains": f" contains the paper's {fmt(paper, s)}",
                 "below": f" lies below the paper's {fmt(paper, s)}",
                 "above": f" lies above the paper's {fmt(paper, s)}"}[magnitude]
    power = _power(estimate, claim, 0.0, "no difference")
    sees = None if paper is None else abs(paper) >= power.mde
    decision = _made(claim, estimate, p_holds, p_fails, texts, "vs 0", power, magnitude=magnitude,
                     details={"magnitude_interval": list(two_sided), "paper": paper, "could_see_paper": sees})
    decision.shown += f"; magnitude: {size}"
    return decision


def order(subject: str, against: Mapping[str, Estimate], claim: Claim) -> Decision:
    """An order claim: ``subject`` against each competitor, ``against[c]`` the paired estimate of subject minus
    ``c`` (module docstring). Holm across the competitors for "one beats it" (the project's one Holm)."""
    from core.multiple_testing import holm_adjust

    names = list(against)
    if not names:
        raise ValueError(f"claim {claim.name}: an order needs at least one competitor")
    p_up = {c: against[c].p_above(0.0) for c in names}
    p_down = dict(zip(names, holm_adjust([against[c].p_below(0.0) for c in names])))
    alpha = claim.alpha
    beaten = [c for c in names if p_up[c] < alpha]
    beating = [c for c in names if p_down[c] < alpha]
    tied = tuple(c for c in names if c not in beaten and c not in beating)
    texts = {HOLDS: f"{subject} beats each of {', '.join(names)}",
             FAILS: f"{', '.join(beating) or '—'} beat{'s' if len(beating) == 1 else ''} {subject}",
             INCONCLUSIVE: f"{subject} tied with {', '.join(tied) or '—'} (neither beats the other)"}
    s = claim.scale
    shown = ("; ".join(f"vs {c} {against[c].figures(s)}, p {p_up[c]:.3g}" for c in names)
             + f" ({against[names[0]].name}, one-sided {claim.level:.0%})")
    # the competitor that decides last: the largest n any tied one needs (None: one that no n decides)
    powers = {}
    for c in tied or names:
        powers[c] = _power(against[c], claim, 0.0, f"no difference from {c}")
    power = max(powers.values(), key=lambda p: math.inf if p.n_to_decide is None else p.n_to_decide)
    first = against[names[0]]
    decision = Decision(claim, INCONCLUSIVE, first.n, None, None, max(p_up.values()), min(p_down.values()),
                        texts, shown, power, tied=tied,
                        details={"competitors": {c: {"estimate": against[c].value,
                                                     "interval": list(against[c].bounds(claim.level)),
                                                     "p_beats": p_up[c], "p_beaten_holm": float(p_down[c])}
                                                 for c in names}})
    return decision._renewed(gates=_n_gate(claim, first.n))


def decide(estimate: Estimate, claim: Claim) -> Decision:
    """The decision of ``claim``'s type on one estimate (an order reads several: :func:`order`)."""
    rules = {BOUND: bound, EQUIVALENCE: equivalence, EFFECT: effect}
    if claim.type not in rules:
        raise ValueError(f"claim {claim.name}: a {claim.type} claim is read with its own function")
    return rules[claim.type](estimate, claim)


def joint(parts: Mapping[str, Decision], claim: Claim) -> Decision:
    """One unit whose every part must hold (a configuration's three sets): holds when each holds, does not
    hold when one does not, else inconclusive; its gates are its parts' (named), its power the part that
    decides last."""
    if not parts:
        raise ValueError(f"claim {claim.name}: a joint decision needs parts")
    figures = {k: d.on_its_figures or d.verdict for k, d in parts.items()}
    verdict = _every_verdict(list(figures.values()))
    named = {v: [k for k, f in figures.items() if f == v] for v in (FAILS, INCONCLUSIVE)}
    consistent = [k for k in named[INCONCLUSIVE] if parts[k].consistent]
    texts = {HOLDS: "holds for each of " + ", ".join(parts),
             FAILS: "does not hold for " + ", ".join(named[FAILS] or ["—"]),
             INCONCLUSIVE: "undecided for " + ", ".join(named[INCONCLUSIVE] or ["—"])
             + (f"; consistent with the paper for {', '.join(consistent)}" if consistent else "")}
    open_ = [d.power for d in parts.values() if d.verdict == INCONCLUSIVE and d.power is not None]
    # the part that decides last
    power = (max(open_, key=lambda p: math.inf if p.n_to_decide is None else p.n_to_decide) if open_ else None)
    # one "vs" and one method when the parts share them, else each part's
    versus = {d.versus for d in parts.values()}
    methods = list(dict.fromkeys(d.method for d in parts.values()))
    shown = "; ".join(f"{k} {d.brief or d.shown}" + (f" {d.versus}" if len(versus) > 1 else "") + f": {figures[k]}"
                      for k, d in parts.items())
    if len(versus) == 1 and next(iter(versus)):
        shown = f"{next(iter(versus))}: {shown}"
    shown += f" ({'; '.join(methods)})" if any(methods) else ""
    sizes = {k: d.n for k, d in parts.items()}
    n = next(iter(sizes.values())) if len(set(map(str, sizes.values()))) == 1 else sizes
    out = Decision(claim, verdict, n, None, None,
                   max(d.p_holds for d in parts.values()), min(d.p_fails for d in parts.values()), texts, shown, power,
                   components=dict(parts),
                   consistent=(all(d.consistent for d in parts.values())
                               if all(d.consistent is not None for d in parts.values()) else None))
    # a gate every part shares is named once, one of some parts with their names
    gates = []
    for k, d in parts.items():
        for g in d.gates:
            shared = all(g in other.gates for other in parts.values())
            gates.append(g if shared else f"{k}: {g}")
    return out._renewed(gates=list(dict.fromkeys(gates)))
