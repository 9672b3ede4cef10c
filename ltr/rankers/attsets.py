"""AttSets ranker (after Yang et al., "Robust Attentional Aggregation of Deep Feature Sets", IJCV 2020).

Each document is embedded, ``e_i = phi(x_i)`` ``[d]``; a shared layer gives per-dimension attention
logits ``g(e_i)`` that are soft-maxed over the list, ``a_i = softmax_j(g(e_j))_i`` (each of the d
dimensions has its own distribution over the documents). The attention re-weights each item's
embedding, ``r_i = m * a_i (.) e_i`` (m = number of real documents, so uniform attention gives
``r_i = e_i``), and pools the set, ``c = sum_j a_j (.) e_j``. The score reads the item, its
re-weighted embedding and the set: ``s_i = head([e_i; r_i; c])``.
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from ltr.rankers import register_ranker
from ltr.rankers.layers import feedforward, item_dim, masked_softmax


@register_ranker("attsets", order=2)
class AttSetsRanker(nn.Module):
    """``hidden``: embedding layers (default 128, 64); ``head_hidden``: scoring layers (default 64)."""

    def __init__(self, n_features: int, hidden: Sequence[int] = (128, 64), head_hidden: Sequence[int] = (64,),
                 dropout: float = 0.1):
        super().__init__()
        d = item_dim(hidden, n_features)
        self.embed = feedforward(n_features, hidden, None, dropout)
        self.attention = nn.Linear(d, d)
        self.head = feedforward(3 * d, head_hidden, 1, dropout)

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        e = self.embed(features)  # [B, n, d]
        a = masked_softmax(self.attention(e), mask)  # [B, n, d], sums to 1 over real items
        context = (a * e).sum(dim=1, keepdim=True)  # [B, 1, d]; padded a is exactly 0
        n_real = mask.sum(dim=1, keepdim=True).unsqueeze(-1).to(e.dtype)
        joined = torch.cat([e, n_real * a * e, context.expand_as(e)], dim=-1)
        return self.head(joined).squeeze(-1).masked_fill(~mask, 0.0)
