"""What a test at its n could have seen, and the n that would decide it (issue 40).

Every inconclusive verdict carries the minimum detectable effect (MDE) at its n and about how many units
(queries, sets' members, discordant queries) would decide it; a test that could not have seen the paper's
effect is inconclusive, never "does not hold". The figures are the normal approximation of a one-sided
test at the claim's level with power 0.8 (``statsmodels.stats.power.NormalIndPower`` with ``ratio=0``, its
one-sample form): a distance ``d`` from the tested value is seen when ``d >= (z_{1-alpha} + z_{power})
sd / sqrt(n)``, ``sd`` being one unit's standard deviation.

API:

- ``POWER``: the power every figure here is for (0.8);
- ``mde(sd, n, level, power=POWER) -> float``: the smallest distance from the tested value that a one-sided test
  at ``level`` over ``n`` units sees with ``power``;
- ``n_to_decide(sd, distance, level, power=POWER) -> int | None``: about how many units would see ``distance``
  (None: a distance of 0, which no n decides);
- ``could_see(distance, sd, n, level, power=POWER) -> bool``: whether ``n`` units would see ``distance``;
- ``Power``: ``mde``, ``n``, ``n_to_decide``, ``unit``, ``against`` (what the distance is measured from),
  ``text()`` and ``to_dict()``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from statsmodels.stats.power import NormalIndPower

POWER = 0.8
_SOLVER = NormalIndPower()


def mde(sd: float, n: int, level: float, power: float = POWER) -> float:
    """The minimum detectable distance (module docstring); ``inf`` for ``n < 1``, 0 for ``sd == 0``."""
    if n < 1:
        return math.inf
    if sd <= 0:
        return 0.0
    size = _SOLVER.solve_power(effect_size=None, nobs1=n, alpha=1 - level, power=power, ratio=0,
                               alternative="larger")
    return float(size) * sd


def n_to_decide(sd: float, distance: float, level: float, power: float = POWER) -> int | None:
    """About how many units a one-sided test at ``level`` needs to see ``distance`` with ``power``."""
    distance = abs(distance)
    if distance == 0 or not math.isfinite(distance):
        return None
    if sd <= 0:
        return 1
    n = _SOLVER.solve_power(effect_size=distance / sd, nobs1=None, alpha=1 - level, power=power, ratio=0,
                            alternative="larger")
    if not math.isfinite(float(n)):  # the root finder gives up below one unit (a distance of many sd): the closed form
        from scipy.stats import norm

        n = ((norm.ppf(level) + norm.ppf(power)) * sd / distance) ** 2
    return max(1, math.ceil(float(n)))


def could_see(distance: float, sd: float, n: int, level: float, power: float = POWER) -> bool:
    """Whether a one-sided test at ``level`` over ``n`` units sees ``distance`` with ``power``."""
    return abs(distance) >= mde(sd, n, level, power)


@dataclass(frozen=True)
class Power:
    """A test's reach at its n: ``mde`` (on the statistic's scale), ``n_to_decide`` (units; None: none does),
    ``against`` (what distance was measured: "the threshold 10.0%"), ``unit`` (what n counts)."""
    mde: float
    n: int
    n_to_decide: int | None
    against: str
    unit: str = "units"
    power: float = POWER
    scale: str = "percent"  # how mde prints: "percent" (a share) or "plain"

    def text(self) -> str:
        """``MDE 9.2 pts at n = 43 queries; about n = 520 would decide (power 80%)``."""
        size = f"{100 * self.mde:.1f} pts" if self.scale == "percent" else f"{self.mde:.3g}"
        decide = ("no n decides (the estimate sits on " + self.against + ")" if self.n_to_decide is None
                  else f"about n = {self.n_to_decide} {self.unit} would decide")
        return f"MDE {size} at n = {self.n} {self.unit}; {decide} (power {self.power:.0%})"

    def to_dict(self) -> dict:
        return {**asdict(self), "text": self.text()}
