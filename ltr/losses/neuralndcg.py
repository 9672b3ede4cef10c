"""NeuralNDCG (Pobrotyn & Bialobrzeski 2021), deterministic variant, allRank's ``neuralNDCG``.

NeuralSort (Grover et al. 2019) relaxes the sorting permutation of the m real scores of a list:

    P_hat[r, :] = softmax( ((m + 1 - 2r) s - A_s 1) / tau ),   A_s[i, j] = |s_i - s_j|,   r = 1..m

(rows = rank positions, columns = documents; padded rows/columns are masked). Sinkhorn scaling
then makes P_hat doubly stochastic: alternately normalise columns and rows, at most ``max_iter``
times, stopping once every row and column sum of the whole batch is within ``tol`` of 1 (allRank's
batch-wide stopping rule, kept for parity). With g = 2^y - 1 (or y when
``powered_relevancies=False``):

    NeuralNDCG_q@k = sum_{r <= k} (P_hat g)_r / log2(1 + r)  /  (IDCG_q@k + eps)
    L = - mean over queries with IDCG > 0 of NeuralNDCG_q@k      (0 when no query has one)

Memory: Sinkhorn keeps 2 * iterations copies of the [B, n, n] matrix for backward.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ltr.losses._common import (
    DEFAULT_EPS,
    RankingLoss,
    check_batch,
    exp_gain,
    ideal_dcg,
    mean_over,
    pair_mask,
    rank_discounts,
    real_labels,
    real_scores,
)


def neural_sort(scores: Tensor, real: Tensor, tau: float) -> tuple[Tensor, Tensor]:
    """Relaxed permutation matrices ``[B, n, n]`` (rank x document) and the mask of valid cells."""
    s = real_scores(scores, real)
    n = s.shape[1]
    n_real = real.sum(dim=-1, keepdim=True)
    rank = torch.arange(n, device=s.device)[None, :]
    real_rank = rank < n_real  # rank positions 1..m of a list with m real documents
    scaling = torch.where(real_rank, n_real + 1 - 2 * (rank + 1), 0).to(s.dtype)
    row_sums = ((s[:, :, None] - s[:, None, :]).abs() * pair_mask(real, include_diagonal=True)).sum(dim=-1)
    logits = scaling[:, :, None] * s[:, None, :] - row_sums[:, None, :]
    valid = real_rank[:, :, None] & real[:, None, :]
    # padded columns get probability 0; rows of padded ranks are replaced below anyway
    logits = torch.where(real[:, None, :], logits / tau, torch.full_like(logits, float("-inf")))
    logits = torch.where(real_rank[:, :, None], logits, torch.zeros_like(logits))
    return torch.softmax(logits, dim=-1), valid


def sinkhorn(P: Tensor, valid: Tensor, padded_block: Tensor, tol: float, max_iter: int) -> Tensor:
    """Alternate column / row normalisation (allRank's ``sinkhorn_scaling``), masked cells kept 0."""
    P = torch.where(valid, P, torch.zeros_like(P))
    # the padded-rank x padded-document block is all ones so padded rows/columns also sum to 1
    P = torch.where(padded_block, torch.ones_like(P), P)
    for _ in range(max_iter):
        P = P / P.sum(dim=1, keepdim=True).clamp(min=DEFAULT_EPS)
        P = P / P.sum(dim=2, keepdim=True).clamp(min=DEFAULT_EPS)
        with torch.no_grad():
            converged = torch.maximum((P.sum(dim=2) - 1).abs().max(), (P.sum(dim=1) - 1).abs().max()) < tol
        if converged:
            break
    return torch.where(valid, P, torch.zeros_like(P))


class NeuralNDCG(RankingLoss):
    def __init__(
        self,
        temperature: float = 1.0,
        k: int | None = None,
        *,
        powered_relevancies: bool = True,
        tol: float = 1e-6,
        max_iter: int = 50,
    ):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if k is not None and k < 1:
            raise ValueError(f"k must be >= 1 or None, got {k}")
        self.temperature, self.k = float(temperature), k
        self.powered_relevancies = bool(powered_relevancies)
        self.tol, self.max_iter = float(tol), int(max_iter)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        n = scores.shape[1]
        k = n if self.k is None else min(self.k, n)
        y = real_labels(labels, real, scores.dtype)
        gains = exp_gain(y) if self.powered_relevancies else y

        P, valid = neural_sort(scores, real, self.temperature)
        real_rank = valid.any(dim=-1)
        padded_block = ~real_rank[:, :, None] & ~real[:, None, :]
        P = sinkhorn(P, valid, padded_block, self.tol, self.max_iter)

        expected_gains = (P @ gains[:, :, None]).squeeze(-1)[:, :k]
        dcg = (expected_gains * rank_discounts(k, scores.device, scores.dtype)).sum(dim=-1)
        idcg = ideal_dcg(gains, k)
        ndcg = dcg / (idcg + DEFAULT_EPS)
        return -mean_over(ndcg, idcg > 0)
