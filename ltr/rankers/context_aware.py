"""Context-Aware Ranker: Pobrotyn et al., "Context-Aware Learning to Rank with Self-Attention", 2020.

Input layer (``Linear(F, d_model) -> ReLU -> Dropout``), a Transformer encoder over the list
(self-attention lets each document's score depend on the others; padded documents are excluded as
attention keys through ``src_key_padding_mask``), and an output layer ``Linear(d_model, 1)``. No
positional encoding: the list is a set, and its order in the file carries no meaning. Pre-layer
normalisation (``norm_first``) with a final LayerNorm, which trains stably without warm-up.
Defaults: d_model 128, 4 heads, 2 blocks, feed-forward 256, dropout 0.1.
"""
from __future__ import annotations

import torch
from torch import nn

from ltr.rankers import register_ranker


@register_ranker("context_aware", order=4)
class ContextAwareRanker(nn.Module):
    def __init__(self, n_features: int, d_model: int = 128, n_heads: int = 4, n_layers: int = 2,
                 d_ff: int = 256, dropout: float = 0.1):
        super().__init__()
        self.input = nn.Sequential(nn.Linear(n_features, d_model), nn.ReLU(), nn.Dropout(dropout))
        block = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(block, n_layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.output = nn.Linear(d_model, 1)

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.encoder(self.input(features), src_key_padding_mask=~mask)
        return self.output(h).squeeze(-1).masked_fill(~mask, 0.0)
