"""ApproxNDCG (Qin, Liu & Li 2010), allRank's ``approxNDCGLoss``; also the core of LearnDCG.

Smooth rank of document i (real documents only, allRank clamps each sigmoid at eps = 1e-10):

    pi(i) = 1 + sum_{j != i} max(sigmoid(-alpha (s_i - s_j)), eps)

Generalised gain and discount (ApproxNDCG is b_g = b_d = 2):

    g(y) = b_g^y - 1,    d(r) = ln(1 + r) / ln(b_d)   (= log2(1 + r) for b_d = 2)
    ApproxNDCG_q = sum_i g(y_i) / d(pi(i))  /  max(IDCG_q, eps)
    L = - mean over queries of ApproxNDCG_q

The ideal DCG ``IDCG_q`` (labels sorted descending, exact ranks 1..n) uses either

- ``ideal="standard"``: 2^y - 1 and log2(1 + r), whatever b_g and b_d are; or
- ``ideal="learned"``: the same g and d as the numerator. ln(b_d) is then a common factor of the
  numerator and the denominator and is cancelled analytically (it is not even computed), so the
  value does not depend on b_d.

With ``ideal="learned"`` a discount *power* p (``discount_power``) changes the discount's shape,
which a base cannot: d(r) = ln(1 + r)^p (p = 1: ApproxNDCG's curvature; p -> 0 flat; larger p
steeper). Any constant factor of d, such as log2 versus ln, still cancels.

A query without relevant documents has numerator 0 and contributes 0 to the mean (allRank).
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
    mean_over,
    pair_mask,
    real_labels,
    real_scores,
)

IDEALS = ("standard", "learned")


def smooth_ranks(scores: Tensor, real: Tensor, alpha: Tensor | float, eps: float = DEFAULT_EPS) -> Tensor:
    """pi(i) = 1 + sum_{j != i, both real} max(sigmoid(-alpha (s_i - s_j)), eps); ``[B, n]``."""
    s = real_scores(scores, real)
    beats = torch.sigmoid(-alpha * (s[:, :, None] - s[:, None, :])).clamp(min=eps)
    return 1.0 + (beats * pair_mask(real)).sum(dim=-1)


def approx_ndcg_per_query(
    scores: Tensor,
    labels: Tensor,
    *,
    alpha: Tensor | float = 1.0,
    gain_base: Tensor | float = 2.0,
    discount_base: Tensor | float = 2.0,
    ideal: str = "standard",
    discount_power: Tensor | float | None = None,
    eps: float = DEFAULT_EPS,
) -> Tensor:
    """ApproxNDCG of every query, ``[B]`` (see the module docstring for the formula)."""
    if ideal not in IDEALS:
        raise ValueError(f"ideal must be one of {IDEALS}, got {ideal!r}")
    if discount_power is not None and ideal != "learned":
        raise ValueError("discount_power needs ideal='learned' (with the standard ideal DCG it is not a shape)")
    real = check_batch(scores, labels)
    dtype, device = scores.dtype, scores.device
    y = real_labels(labels, real, dtype)
    gain_base = torch.as_tensor(gain_base, dtype=dtype, device=device)
    discount_base = torch.as_tensor(discount_base, dtype=dtype, device=device)

    pi = smooth_ranks(scores, real, alpha, eps)
    gains = torch.where(real, torch.pow(gain_base, y) - 1.0, torch.zeros_like(y))
    if ideal == "learned":
        # ln(b_d) cancels between numerator and ideal DCG: use the natural-log discount ln(1 + r)
        n = y.shape[1]
        ranks = torch.arange(1, n + 1, dtype=dtype, device=device)
        discount, ideal_discount = torch.log1p(pi), torch.log1p(ranks)
        if discount_power is not None:
            discount, ideal_discount = discount**discount_power, ideal_discount**discount_power
        dcg = (gains / discount).sum(dim=-1)
        ideal_gains = torch.sort(gains, dim=-1, descending=True).values
        idcg = (ideal_gains / ideal_discount).sum(dim=-1)
    else:
        dcg = (gains / (torch.log1p(pi) / torch.log(discount_base))).sum(dim=-1)
        idcg = ideal_dcg(exp_gain(y))
    return dcg / idcg.clamp(min=eps)


@register_loss("approxndcg", order=7)
class ApproxNDCG(RankingLoss):
    def __init__(self, alpha: float = 1.0, eps: float = DEFAULT_EPS):
        super().__init__()
        self.alpha = float(alpha)
        self.eps = float(eps)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        # b_g = b_d = 2 as tensors, so this is the very computation LearnDCG does at its init
        ndcg = approx_ndcg_per_query(
            scores,
            labels,
            alpha=torch.tensor(self.alpha, dtype=scores.dtype, device=scores.device),
            gain_base=2.0,
            discount_base=2.0,
            ideal="standard",
            eps=self.eps,
        )
        return -mean_over(ndcg, real.any(dim=-1))


def approx_ndcg_at_k(scores: Tensor, labels: Tensor, k: int, *, alpha: Tensor | float = 1.0,
                     eps: float = DEFAULT_EPS) -> Tensor:
    """A smooth NDCG@k of every query, ``[B]``: the evaluation's conventions (2^y - 1, log2(1 + r),
    ideal DCG@k over exact ranks) with smooth ranks pi and a smooth cutoff sigmoid(k + 1/2 - pi):

        sum_i (2^{y_i} - 1) sigmoid(k + 1/2 - pi(i)) / log2(1 + pi(i))  /  IDCG@k

    0 for a query without relevant documents (its numerator is 0)."""
    real = check_batch(scores, labels)
    y = real_labels(labels, real, scores.dtype)
    pi = smooth_ranks(scores, real, alpha, eps)
    gains = torch.where(real, exp_gain(y), torch.zeros_like(y))
    dcg = (gains * torch.sigmoid(k + 0.5 - pi) / torch.log2(1.0 + pi)).sum(dim=-1)
    return dcg / ideal_dcg(gains, k).clamp(min=eps)
