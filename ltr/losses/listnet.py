"""ListNet (Cao et al. 2007), top-one probability version as in allRank:

    P_y(i) = softmax_i(y),  P_s(i) = softmax_i(s)   (over the real documents of the list)
    L = mean over queries of  -sum_i P_y(i) log(P_s(i) + eps),   eps = 1e-10

The labels themselves are the logits of the target distribution (allRank's convention), so an
all-zero query has a uniform target.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ltr.losses import register_loss
from ltr.losses._common import DEFAULT_EPS, RankingLoss, check_batch, mean_over, real_labels


def masked_softmax(logits: Tensor, real: Tensor) -> Tensor:
    """Softmax over the real slots of each row; padded slots get probability 0."""
    filled = torch.where(real, logits, torch.full_like(logits, float("-inf")))
    # a row without real slots would be all -inf (NaN softmax): give it zeros instead
    filled = torch.where(real.any(dim=-1, keepdim=True), filled, torch.zeros_like(filled))
    return torch.softmax(filled, dim=-1) * real


@register_loss("listnet", order=2)
class ListNet(RankingLoss):
    def __init__(self, eps: float = DEFAULT_EPS):
        super().__init__()
        self.eps = float(eps)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        target = masked_softmax(real_labels(labels, real, scores.dtype), real)
        predicted = masked_softmax(scores, real)
        per_query = -(target * torch.log(predicted + self.eps)).sum(dim=-1)
        return mean_over(per_query, real.any(dim=-1))
