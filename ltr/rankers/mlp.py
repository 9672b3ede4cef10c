"""MLP ranker: each document scored on its own features, ``s_i = MLP(x_i)`` (no list context)."""
from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from ltr.rankers import register_ranker
from ltr.rankers.layers import feedforward


@register_ranker("mlp", order=1)
class MLPRanker(nn.Module):
    """``hidden`` sizes of the ReLU layers (default 128, 64), ``dropout`` after each (default 0.1)."""

    def __init__(self, n_features: int, hidden: Sequence[int] = (128, 64), dropout: float = 0.1):
        super().__init__()
        self.net = feedforward(n_features, hidden, 1, dropout)

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``features [B, n, F]``, ``mask [B, n]`` (True = real) -> scores ``[B, n]`` (0 at padding)."""
        return self.net(features).squeeze(-1).masked_fill(~mask, 0.0)
