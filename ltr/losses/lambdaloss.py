"""LambdaLoss framework (Wang et al. 2018), allRank's ``lambdaLoss``.

Documents are sorted by score (descending, ties by document order); positions r = 1..n in that order.
With G_r = (2^{y_r} - 1) / IDCG@k, D_r = log2(1 + r) and the pair set P = {(r, t): both real,
y_r > y_t, r <= k, t <= k} (all real pairs, diagonal included, for ``ndcgloss1``):

    L = - sum over P of  log2( max( max(sigmoid(sigma (s_r - s_t)), eps) ^ w_rt , eps) )

(``reduction="mean"`` divides by |P| instead), with the weighing schemes w_rt

    ranknet      1
    ndcgloss1    G_r / D_r
    lambdarank   |1/D_r - 1/D_t| |G_r - G_t|                                  (LambdaRank's |dNDCG|)
    ndcgloss2    |1/D_{|r-t|} - 1/D_{|r-t|+1}| |G_r - G_t|                    (delta_{rt}, 0 on the diagonal)
    ndcgloss2pp  mu * ndcgloss2 + lambdarank                                  (NDCG-Loss2++)

Defaults follow allRank: sigma = 1, mu = 10, k = None (whole list), reduction = "sum" (so the loss
grows with the batch size), binary logarithm, eps = 1e-10. The default scheme is NDCG-Loss2++,
the paper's best. ``lambdarank`` in ``LOSS_NAMES`` is this loss with the ``lambdarank`` scheme.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ltr.losses import register_loss
from ltr.losses._common import (
    DEFAULT_EPS,
    RankingLoss,
    check_batch,
    exp_gain,
    ideal_dcg,
    ranking_order,
    real_labels,
    real_scores,
)

SCHEMES = ("ranknet", "ndcgloss1", "ndcgloss2", "lambdarank", "ndcgloss2pp")


def _inverse_discount_gaps(n: int, device, dtype) -> Tensor:
    """delta_{rt} = |1/D_{|r-t|} - 1/D_{|r-t|+1}|, D_m = log2(1 + m), zero on the diagonal; [n, n]."""
    positions = torch.arange(n, device=device)
    gap = (positions[:, None] - positions[None, :]).abs().to(dtype)
    # D_0 = log2(1) = 0 on the diagonal: fill with 1 to stay finite, then zero it
    inner = torch.where(gap > 0, 1.0 / torch.log2(1.0 + gap.clamp(min=1.0)), torch.zeros_like(gap))
    delta = (inner - 1.0 / torch.log2(2.0 + gap)).abs()
    return torch.where(gap > 0, delta, torch.zeros_like(delta))


def pair_weights(scheme: str, G: Tensor, D: Tensor, mu: float) -> Tensor | float:
    """Weights w_rt ``[B, n, n]`` of a scheme; G ``[B, n]`` normalised gains, D ``[n]`` discounts."""
    gain_gaps = (G[:, :, None] - G[:, None, :]).abs()
    if scheme == "ranknet":
        return 1.0
    if scheme == "ndcgloss1":
        return (G / D)[:, :, None]
    if scheme == "lambdarank":
        return (1.0 / D[:, None] - 1.0 / D[None, :]).abs() * gain_gaps
    ndcgloss2 = _inverse_discount_gaps(G.shape[1], G.device, G.dtype) * gain_gaps
    if scheme == "ndcgloss2":
        return ndcgloss2
    if scheme == "ndcgloss2pp":
        return mu * ndcgloss2 + pair_weights("lambdarank", G, D, mu)
    raise ValueError(f"weighing scheme must be one of {SCHEMES}, got {scheme!r}")


@register_loss("lambdaloss", order=6)
class LambdaLoss(RankingLoss):
    def __init__(
        self,
        scheme: str = "ndcgloss2pp",
        *,
        sigma: float = 1.0,
        mu: float = 10.0,
        k: int | None = None,
        reduction: str = "sum",
        eps: float = DEFAULT_EPS,
    ):
        super().__init__()
        if scheme not in SCHEMES:
            raise ValueError(f"weighing scheme must be one of {SCHEMES}, got {scheme!r}")
        if reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
        if k is not None and k < 1:
            raise ValueError(f"k must be >= 1 or None, got {k}")
        self.scheme, self.sigma, self.mu, self.k = scheme, float(sigma), float(mu), k
        self.reduction, self.eps = reduction, float(eps)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        n = scores.shape[1]
        order = ranking_order(scores, real)
        s = torch.gather(real_scores(scores, real), 1, order)
        real_sorted = torch.gather(real, 1, order)
        y = torch.gather(real_labels(labels, real, s.dtype), 1, order)

        gains = exp_gain(y)
        G = gains / ideal_dcg(gains, self.k).clamp(min=self.eps)[:, None]
        D = torch.log2(1.0 + torch.arange(1, n + 1, device=s.device, dtype=s.dtype))
        weights = pair_weights(self.scheme, G, D, self.mu)

        pairs = real_sorted[:, :, None] & real_sorted[:, None, :]
        if self.scheme != "ndcgloss1":
            pairs = pairs & (y[:, :, None] > y[:, None, :])
        if self.k is not None:
            top = torch.arange(n, device=s.device) < self.k
            pairs = pairs & top[None, :, None] & top[None, None, :]

        probas = torch.sigmoid(self.sigma * (s[:, :, None] - s[:, None, :])).clamp(min=self.eps)
        pair_losses = -torch.log2((probas**weights).clamp(min=self.eps))
        total = (pair_losses * pairs).sum()
        if self.reduction == "mean":
            return total / pairs.sum().clamp(min=1)
        return total

