"""LambdaRank (Burges et al. 2006) as a LambdaLoss weighing scheme, allRank's
``lambdaLoss(weighing_scheme="lambdaRank_scheme")``:

    L = - sum over pairs (r, t), y_r > y_t, of  |1/D_r - 1/D_t| |G_r - G_t| log2 sigmoid(sigma (s_r - s_t))

with documents at positions r, t of the current ranking, D_r = log2(1 + r), G_r = (2^{y_r} - 1)/IDCG,
i.e. the RankNet pair loss weighted by |Delta NDCG| of swapping the pair (see ``lambdaloss``).
"""
from __future__ import annotations

from ltr.losses import register_loss
from ltr.losses._common import DEFAULT_EPS
from ltr.losses.lambdaloss import LambdaLoss


@register_loss("lambdarank", order=5)
class LambdaRank(LambdaLoss):
    def __init__(self, *, sigma: float = 1.0, k: int | None = None, reduction: str = "sum", eps: float = DEFAULT_EPS):
        super().__init__("lambdarank", sigma=sigma, k=k, reduction=reduction, eps=eps)
