"""ListMLE (Xia et al. 2008): negative log-likelihood of the label order under Plackett-Luce.

    pi = documents sorted by label, descending (ties in random order, as in allRank)
    L  = mean over queries of  sum_{r} [ logsumexp_{r' >= r} s_{pi(r')} - s_{pi(r)} ]

Computed with ``logcumsumexp`` over the reversed list (exact, no eps). Ties between equal labels are
broken by a random permutation drawn from torch's global generator (seed it for reproducibility),
since any fixed tie order would bias the ranker toward it.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ltr.losses import register_loss
from ltr.losses._common import RankingLoss, check_batch, mean_over, real_scores


@register_loss("listmle", order=3)
class ListMLE(RankingLoss):
    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        s = real_scores(scores, real)
        # padded slots sort last: key -inf; random tie order via a shuffle then a stable sort
        key = torch.where(real, labels.to(s.dtype), torch.full_like(s, float("-inf")))
        shuffle = torch.argsort(torch.rand(key.shape, device=key.device), dim=-1)
        by_label = torch.sort(torch.gather(key, 1, shuffle), dim=-1, descending=True, stable=True).indices
        order = torch.gather(shuffle, 1, by_label)
        s_sorted = torch.gather(s, 1, order)
        real_sorted = torch.gather(real, 1, order)
        masked = torch.where(real_sorted, s_sorted, torch.full_like(s_sorted, float("-inf")))
        # log of the Plackett-Luce normaliser of every suffix; padded suffixes are -inf -> masked
        suffix_lse = torch.logcumsumexp(masked.flip(-1), dim=-1).flip(-1)
        terms = torch.where(real_sorted, suffix_lse - s_sorted, torch.zeros_like(s_sorted))
        return mean_over(terms.sum(dim=-1), real.any(dim=-1))
