"""RankNet (Burges et al. 2005): logistic loss on every correctly-orderable pair.

    L = mean over pairs (i, j) of the batch with y_i > y_j of  log(1 + exp(-sigma (s_i - s_j)))

i.e. binary cross-entropy with logits ``sigma (s_i - s_j)`` and target 1, averaged over all such pairs
of the batch pooled together (allRank's ``rankNet``; its fixture uses sigma = 1). A batch without any
such pair (all labels equal) gives 0.
"""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from ltr.losses import register_loss
from ltr.losses._common import RankingLoss, check_batch, pair_mask, real_labels, real_scores


@register_loss("ranknet", order=1)
class RankNet(RankingLoss):
    def __init__(self, sigma: float = 1.0):
        super().__init__()
        self.sigma = float(sigma)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        s = real_scores(scores, real)
        y = real_labels(labels, real, s.dtype)
        ordered = pair_mask(real) & (y[:, :, None] > y[:, None, :])
        pair_losses = F.softplus(-self.sigma * (s[:, :, None] - s[:, None, :]))
        n_pairs = ordered.sum().clamp(min=1)
        return (pair_losses * ordered).sum() / n_pairs
