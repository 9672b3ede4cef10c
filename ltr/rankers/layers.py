"""Building blocks shared by the rankers: item-wise feed-forward stacks and a masked softmax."""
from __future__ import annotations

from typing import Sequence

import torch
from torch import nn


def feedforward(n_in: int, hidden: Sequence[int], n_out: int | None = None,
                dropout: float = 0.0) -> nn.Sequential:
    """``Linear -> ReLU -> Dropout`` per hidden size, then a bare ``Linear(n_out)`` when given.

    Applied to ``[..., n_in]`` it acts on each item independently, so padded items cannot leak
    into real ones through it.
    """
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(n_in, int(size)), nn.ReLU(), nn.Dropout(dropout)]
        n_in = int(size)
    if n_out is not None:
        layers.append(nn.Linear(n_in, n_out))
    return nn.Sequential(*layers)


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the list dimension (dim 1) of ``logits [B, n, ...]`` with padded items excluded.

    Padded positions get weight exactly 0 (logit -inf), so a row's weights depend on its real items
    only. Every row must hold at least one real item (the batcher guarantees it).
    """
    expand = mask.reshape(mask.shape + (1,) * (logits.dim() - mask.dim()))
    return torch.softmax(logits.masked_fill(~expand, float("-inf")), dim=1)


def item_dim(hidden: Sequence[int], n_features: int) -> int:
    """Width of the item embedding produced by ``feedforward(n_features, hidden)``."""
    return int(hidden[-1]) if len(hidden) else n_features
