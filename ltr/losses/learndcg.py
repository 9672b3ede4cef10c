"""LearnDCG: ApproxNDCG whose gain base, discount base and temperature are learned with the ranker.

    pi(i) = 1 + sum_{j != i} sigmoid(-alpha (s_i - s_j))          (real documents only)
    g(y)  = b_g^y - 1,         d(r) = ln(1 + r) / ln(b_d)
    b_g = 1 + softplus(theta_g),  b_d = 1 + softplus(theta_d),  alpha = softplus(theta_alpha)
    L = - mean over queries of  sum_i g(y_i) / d(pi(i))  /  IDCG_q

(the formula and the eps clamps are those of ``ltr.losses.approxndcg``). Initialised at
b_g = b_d = 2, alpha = 1 (theta = ln(e - 1)) it is ApproxNDCG(alpha=1), value and gradient.

The ideal DCG is a modelling choice (``normalisation``):

- ``"standard"`` (default): IDCG with the standard 2^y - 1 and log2(1 + r). What the parameters then
  do, in closed form (tests in ``tests/ltr/losses/test_losses.py``):

  * DCG = ln(b_d) * S with S = sum_i g(y_i) / ln(1 + pi(i)) independent of b_d, so
    dL/dtheta_d = L * sigmoid(theta_d) / (b_d ln b_d). On a batch with at least one relevant document
    L < 0 and this gradient is negative; on a batch without one L = 0 and the gradient is exactly 0.
    It is never positive.
  * dS/db_g > 0 (every gain b_g^y - 1 grows with b_g), so dL/dtheta_g < 0 on the same batches and 0
    on the others.
  * Under gradient descent (Adam) theta_d and theta_g therefore only climb, by about the
    loss-parameter learning rate per step: where they "end" is set by the number of steps (fold
    size, batch size, epochs, early stopping), not by the data. Folds that train different numbers of
    steps end at different values; that is drift, not learning.
  * The loss is unbounded below (b_g = 10, b_d = 100 give values far below -1): "standard" LearnDCG is
    ApproxNDCG with a growing gain base and a learning-rate multiplier ln(b_d) that grows with the
    step count.
- ``"learned"``: IDCG with the same learned g and d. ln(b_d) cancels exactly (it is removed from
  the computation), so theta_d gets exactly zero gradient and keeps its initial value; only b_g
  and alpha shape the loss, and minimising the loss over b_g moves it towards whatever gain makes
  the current ranking look best (monotonically, in practice). The loss stays in [-1, 0] like NDCG.

Neither setting can identify a discount from data. ``ltr.losses.learndcg_meta`` is a variant whose
parameters change the surrogate's shape and are learned for validation NDCG instead.

``learnable=False`` freezes the three parameters at their initial values (``learndcg_fixed``).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ltr.losses import register_loss
from ltr.losses._common import DEFAULT_EPS, RankingLoss, check_batch, mean_over
from ltr.losses.approxndcg import IDEALS, approx_ndcg_per_query


def inverse_softplus(value: float) -> float:
    """theta with softplus(theta) = log(1 + e^theta) = value, for any finite value > 0.

    theta = log(e^value - 1). For large values e^value overflows (value > ~709), so there it is
    computed as theta = value + log(1 - e^-value) = value + log(-expm1(-value)), which is exact
    algebra and stable (it tends to value). Non-positive, infinite and NaN values have no inverse.
    """
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"softplus takes values in (0, inf); cannot invert {value}")
    if value > 20.0:  # e^-20 ~ 2e-9: the correction term is tiny, expm1 keeps it exact
        return value + math.log(-math.expm1(-value))
    return math.log(math.expm1(value))


class LearnableGainLoss(RankingLoss):
    """The learnable gain both LearnDCG variants share: parameters ``_theta_g`` and ``_theta_d`` (set
    by the subclass), exposed as ``theta_g``/``theta_d``, and ``b_g = 1 + softplus(θ_g)``."""

    theta_g = property(lambda self: self._theta_g)
    theta_d = property(lambda self: self._theta_d)

    @property
    def b_g(self) -> Tensor:
        return 1.0 + F.softplus(self._theta_g)

    def theta_tensors(self) -> dict[str, Tensor]:
        return {"theta_g": self._theta_g, "theta_d": self._theta_d} if self.learnable else {}


@register_loss("learndcg", order=10, learnable=True)
class LearnDCG(LearnableGainLoss):
    def __init__(
        self,
        b_g: float = 2.0,
        b_d: float = 2.0,
        alpha: float = 1.0,
        *,
        normalisation: str = "standard",
        learnable: bool = True,
        eps: float = DEFAULT_EPS,
    ):
        super().__init__()
        if normalisation not in IDEALS:
            raise ValueError(f"normalisation must be one of {IDEALS}, got {normalisation!r}")
        if not all(math.isfinite(float(v)) for v in (b_g, b_d, alpha)) or b_g <= 1 or b_d <= 1 or alpha <= 0:
            raise ValueError(f"need finite b_g > 1, b_d > 1, alpha > 0; got b_g={b_g}, b_d={b_d}, alpha={alpha}")
        float32_max = torch.finfo(torch.float32).max
        too_large = [f"{n}={v}" for n, v in (("b_g", b_g), ("b_d", b_d), ("alpha", alpha)) if float(v) > float32_max / 2]
        if too_large:
            raise ValueError(f"{', '.join(too_large)} is beyond float32 (the parameters are float32 tensors)")
        self.normalisation = normalisation
        self.learnable = bool(learnable)
        self.eps = float(eps)
        self._theta_g = nn.Parameter(torch.tensor(inverse_softplus(b_g - 1.0)), requires_grad=learnable)
        self._theta_d = nn.Parameter(torch.tensor(inverse_softplus(b_d - 1.0)), requires_grad=learnable)
        self._theta_alpha = nn.Parameter(torch.tensor(inverse_softplus(alpha)), requires_grad=learnable)

    theta_alpha = property(lambda self: self._theta_alpha)

    @property
    def b_d(self) -> Tensor:
        return 1.0 + F.softplus(self._theta_d)

    @property
    def alpha(self) -> Tensor:
        return F.softplus(self._theta_alpha)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        dtype = scores.dtype
        ndcg = approx_ndcg_per_query(
            scores,
            labels,
            alpha=self.alpha.to(dtype),
            gain_base=self.b_g.to(dtype),
            discount_base=self.b_d.to(dtype),
            ideal=self.normalisation,
            eps=self.eps,
        )
        loss = -mean_over(ndcg, real.any(dim=-1))
        if self.normalisation == "learned" and self.learnable:
            # keep theta_d in the graph with its exact (zero) gradient, so optimisers and logs see 0
            loss = loss + 0.0 * self._theta_d.to(dtype)
        return loss

    def tracked_parameters(self) -> dict[str, float]:
        if not self.learnable:
            return {}
        with torch.no_grad():
            return {
                "theta_g": self._theta_g.item(),
                "theta_d": self._theta_d.item(),
                "theta_alpha": self._theta_alpha.item(),
                "b_g": self.b_g.item(),
                "b_d": self.b_d.item(),
                "alpha": self.alpha.item(),
            }

    def theta_gradients(self) -> dict[str, float]:
        if not self.learnable:
            return {}
        return {
            name: (0.0 if p.grad is None else p.grad.item())
            for name, p in (("theta_g", self._theta_g), ("theta_d", self._theta_d), ("theta_alpha", self._theta_alpha))
        }

    def theta_tensors(self) -> dict[str, Tensor]:
        return {**super().theta_tensors(), "theta_alpha": self._theta_alpha} if self.learnable else {}

    def tracked_tensor(self) -> Tensor:
        """The values of :meth:`tracked_parameters`, in its order, as one tensor on the device (no host
        sync; the three θ go through one softplus on their stacked vector). Empty when not learnable."""
        if not self.learnable:
            return self._theta_g.detach().new_empty(0)
        theta = torch.stack((self._theta_g, self._theta_d, self._theta_alpha)).detach()
        b = F.softplus(theta)
        return torch.cat((theta, b[:2] + 1.0, b[2:]))

    def extra_repr(self) -> str:
        b = self.tracked_parameters() or {"b_g": self.b_g.item(), "b_d": self.b_d.item(), "alpha": self.alpha.item()}
        return (
            f"b_g={b['b_g']:.4g}, b_d={b['b_d']:.4g}, alpha={b['alpha']:.4g}, "
            f"normalisation={self.normalisation!r}, learnable={self.learnable}"
        )


@register_loss("learndcg_fixed", order=11, twin="approxndcg",
               twin_note="identical by construction: LearnDCG frozen at b_g = b_d = 2, alpha = 1 is "
                         "ApproxNDCG(alpha = 1), value and gradient",
               twin_defaults={"b_g": 2.0, "b_d": 2.0, "alpha": 1.0, "normalisation": "standard"})
class LearnDCGFixed(LearnDCG):
    """LearnDCG with its three parameters frozen at their initial values (the ablation arm)."""

    def __init__(self, **params):
        super().__init__(**params, learnable=False)
