"""Attention-MIL ranker: Ilse, Tomczak & Welling, "Attention-based Deep Multiple Instance Learning", 2018.

Documents are embedded, ``h_i = phi(x_i)``; attention pooling gives one list context
``z = sum_i a_i h_i`` with ``a = softmax_i(w^T tanh(V h_i))`` (plain) or
``a = softmax_i(w^T (tanh(V h_i) (.) sigmoid(U h_i)))`` (gated: the sigmoid gate lets the
attention express non-monotone relations that tanh alone cannot). The context is joined to each
item before scoring: ``s_i = head([h_i; z])``, so a document is judged against the whole list.
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from ltr.rankers import register_ranker
from ltr.rankers.layers import feedforward, item_dim, masked_softmax


@register_ranker("attention_mil", order=3)
class AttentionMILRanker(nn.Module):
    """``gated`` selects the gated variant (default plain); ``attention_dim`` is V's width (default 64)."""

    def __init__(self, n_features: int, hidden: Sequence[int] = (128, 64), attention_dim: int = 64,
                 gated: bool = False, head_hidden: Sequence[int] = (64,), dropout: float = 0.1):
        super().__init__()
        d = item_dim(hidden, n_features)
        self.embed = feedforward(n_features, hidden, None, dropout)
        self.V = nn.Linear(d, attention_dim)
        self.U = nn.Linear(d, attention_dim) if gated else None
        self.w = nn.Linear(attention_dim, 1, bias=False)
        self.head = feedforward(2 * d, head_hidden, 1, dropout)

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.embed(features)  # [B, n, d]
        u = torch.tanh(self.V(h))
        if self.U is not None:
            u = u * torch.sigmoid(self.U(h))
        a = masked_softmax(self.w(u), mask)  # [B, n, 1]
        z = (a * h).sum(dim=1, keepdim=True)  # [B, 1, d]
        return self.head(torch.cat([h, z.expand_as(h)], dim=-1)).squeeze(-1).masked_fill(~mask, 0.0)
