"""Whether a predictor foresees a target: the claim "a higher predictor value goes with an easier query",
decided by the shared inference core (:mod:`core.inference.claims`, issue 40) like every other claim.

The claim is a bound (``FORESEES``): Kendall's τ-b oriented so that positive means "higher predictor,
easier query" (``tau_easier``) lies above 0, read one-sided at level 0.975 (a two-sided 5% test and a
95% interval), over at least ``MIN_VERDICT_N`` queries (the minimum of the study's query-level claims). Its test is scipy's τ-b test with Holm's correction across the whole table (the
table's family, :func:`pipeline.predict.evaluation.holm_table`), and its 95% percentile bootstrap
interval must agree: a direction is read only when both exclude 0 (an intersection of the two tests, so
no weaker than either; where they disagree the decision says so). ``foresees`` is the core's "holds",
``does not foresee`` its "does not hold" (τ significantly on the harder side), else ``inconclusive``
with the power the core gives (the smallest τ the test could see, and about how many queries would
decide it).

Gates, each with the figures' own verdict kept beside: a target or predictor made by a sub-1B or
unknown-size model (``no verdict (model gate)``), a predictor read from pool-built index statistics
(``left out (pool statistics)``, unless counted on purpose), fewer queries than the minimum.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import norm

from core.findings import FAILS, HOLDS
from core.inference.claims import ABOVE, BOUND, Claim, Decision, bound

MIN_VERDICT_N = 30  # the study's query-level claims' minimum (pipeline/findings/paper_claims.json; a test keeps them equal)
LEVEL = 0.975  # one-sided, so a two-sided 5% test and a 95% interval
FORESEES = Claim("foresees", BOUND, statistic="Kendall τ-b, oriented: + = a higher predictor value, an easier query",
                 level=LEVEL, threshold=0.0, side=ABOVE, combine="each",
                 family="every row of the evaluation table (Holm's correction of τ's p across it)",
                 min_n=MIN_VERDICT_N, counts="queries", scale="signed")
VERDICTS = {HOLDS: "foresees", FAILS: "does not foresee"}  # the core's words for this claim ("inconclusive" as is)


@dataclass(frozen=True)
class OrientedTau:
    """τ-b oriented easier-positive, as the core's estimates are read (:class:`core.inference.claims.Estimate`):
    its one-sided p-values against 0 from the Holm-corrected two-sided p, its 95% bootstrap interval as the
    bounds at the claim's level, and a normal approximation with the bootstrap's standard error elsewhere."""
    value: float
    n: int
    p_two_sided: float  # Holm-corrected across the table
    interval: tuple[float, float]  # 95% percentile bootstrap, oriented
    unit: str = "queries"
    name: str = "τ-b test (Holm) and 95% bootstrap interval"

    @property
    def se(self) -> float:
        return (self.interval[1] - self.interval[0]) / (2 * norm.ppf(LEVEL))

    def bounds(self, level: float) -> tuple[float, float]:
        if math.isclose(level, LEVEL):
            return self.interval
        z = norm.ppf(level)
        return self.value - z * self.se, self.value + z * self.se

    def _one_sided(self, positive: bool) -> float:
        half = self.p_two_sided / 2
        return half if (self.value > 0) == positive and self.value != 0 else 1 - half

    def p_above(self, x: float) -> float:
        return self._one_sided(True) if x == 0 else float(norm.sf((self.value - x) / max(self.se, 1e-12)))

    def p_below(self, x: float) -> float:
        return self._one_sided(False) if x == 0 else float(norm.cdf((self.value - x) / max(self.se, 1e-12)))

    def sd_at(self, x: float) -> float:
        return self.se * math.sqrt(max(self.n, 1))

    def figures(self, scale: str = "signed") -> str:
        return f"τ(easier) {self.value:+.3f} over {self.n} queries"


def decide(tau_easier: float, n: int, p_holm: float, interval: tuple[float, float]) -> Decision:
    """The core's decision on one row's figures (oriented τ, n, Holm p, oriented 95% interval), the bootstrap
    interval's agreement required (module docstring)."""
    low, high = interval
    decision = bound(OrientedTau(tau_easier, n, p_holm, (low, high)), FORESEES)
    if decision.p_holds < FORESEES.alpha and low <= 0:
        decision = decision.with_p_holds(1.0, f"its 95% bootstrap interval [{low:+.2f}, {high:+.2f}] includes 0")
    if decision.p_fails < FORESEES.alpha and high >= 0:
        decision = decision.with_p_fails(1.0, f"its 95% bootstrap interval [{low:+.2f}, {high:+.2f}] includes 0")
    if (low > 0 and decision.p_holds >= FORESEES.alpha) or (high < 0 and decision.p_fails >= FORESEES.alpha):
        decision = decision.with_p_holds(decision.p_holds, f"the interval excludes 0 but τ's Holm-corrected p "
                                                           f"{p_holm:.3g} across the table is not below 0.05")
    return decision


def reason(decision: Decision) -> str:
    """The decision's reason, with the power when it is inconclusive."""
    text = decision.reason()
    power = decision.power_text() if decision.verdict not in VERDICTS else ""
    return f"{text}; {power}" if power else text
