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

How it is computed (same values as allRank's loop, up to float rounding):

- Sinkhorn keeps the matrix as ``diag(u) K diag(v)`` and updates only the scaling vectors
  (``v <- v / (v * K^T u)``, ``u <- u / (u * K v)``): two batched matrix-vector products per
  iteration instead of four passes that write a new ``[B, n, n]`` matrix, and autograd keeps K once
  plus ``[B, n]`` vectors instead of 2 x iterations matrices. ``P_hat g = u * (K (v * g))``, so the
  scaled matrix is never built.
- No host sync in the loop: the convergence test runs on the device and, once it holds, freezes
  u and v (``torch.where``), which gives exactly the early stop of allRank. Every ``check_every``
  iterations (default 10) the host looks once whether the batch has converged, only to skip the
  remaining no-op iterations; ``check_every=0`` never looks (a fixed ``max_iter`` iterations, no sync
  at all). The result does not depend on ``check_every``. In float32 with ``tol=1e-6`` the sums
  usually stay ~1e-4 from 1, so all ``max_iter`` iterations run (as in allRank).

Memory: K ``[B, n, n]`` (the NeuralSort softmax, which autograd keeps anyway) plus ``O(max_iter * B * n)``.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ltr.losses import register_loss
from ltr.losses._common import DEFAULT_EPS, RankingLoss, check_batch, exp_gain, ideal_dcg, mean_over
from ltr.losses._common import pair_mask, rank_discounts, real_labels, real_scores


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


def sinkhorn_scalings(K: Tensor, tol: float, max_iter: int, check_every: int = 10) -> tuple[Tensor, Tensor]:
    """Scaling vectors ``(u, v)`` ``[B, n]`` with ``diag(u) K diag(v)`` = allRank's ``sinkhorn_scaling(K)``.

    Each iteration normalises columns, then rows (sums clamped at ``DEFAULT_EPS`` as allRank does),
    then tests convergence on the device; see the module docstring for the stopping rule.
    """
    u = torch.ones(K.shape[:2], dtype=K.dtype, device=K.device)
    v = torch.ones_like(u)
    done = torch.zeros((), dtype=torch.bool, device=K.device)
    col = torch.bmm(u[:, None, :], K).squeeze(1)  # K^T u: column sums are v * col
    for it in range(max_iter):
        v_next = v / (v * col).clamp(min=DEFAULT_EPS)
        row = torch.bmm(K, v_next[:, :, None]).squeeze(-1)  # K v: row sums are u * row
        u_next = u / (u * row).clamp(min=DEFAULT_EPS)
        col_next = torch.bmm(u_next[:, None, :], K).squeeze(1)
        u, v = torch.where(done, u, u_next), torch.where(done, v, v_next)
        with torch.no_grad():
            deviation = torch.maximum((u_next * row - 1).abs().max(), (v_next * col_next - 1).abs().max())
            done = done | (deviation < tol)
        col = col_next
        if check_every and (it + 1) % check_every == 0 and it + 1 < max_iter and bool(done):
            break  # every later iteration would leave u and v frozen
    return u, v


@register_loss("neuralndcg", order=8)
class NeuralNDCG(RankingLoss):
    def __init__(
        self,
        temperature: float = 1.0,
        k: int | None = None,
        *,
        powered_relevancies: bool = True,
        tol: float = 1e-6,
        max_iter: int = 50,
        check_every: int = 10,
    ):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if k is not None and k < 1:
            raise ValueError(f"k must be >= 1 or None, got {k}")
        self.temperature, self.k = float(temperature), k
        self.powered_relevancies = bool(powered_relevancies)
        if check_every < 0:
            raise ValueError(f"check_every must be >= 0 (0: never), got {check_every}")
        self.tol, self.max_iter, self.check_every = float(tol), int(max_iter), int(check_every)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        n = scores.shape[1]
        k = n if self.k is None else min(self.k, n)
        y = real_labels(labels, real, scores.dtype)
        gains = exp_gain(y) if self.powered_relevancies else y

        P, valid = neural_sort(scores, real, self.temperature)
        real_rank = valid.any(dim=-1)
        # the padded-rank x padded-document block is all ones so padded rows/columns also sum to 1
        padded_block = ~real_rank[:, :, None] & ~real[:, None, :]
        K = torch.where(padded_block, torch.ones_like(P), torch.where(valid, P, torch.zeros_like(P)))
        u, v = sinkhorn_scalings(K, self.tol, self.max_iter, self.check_every)

        # (diag(u) K diag(v)) g restricted to valid cells: padded documents have gain 0, so the
        # all-ones block adds nothing and real ranks see only real documents.
        expected_gains = (u * torch.bmm(K, (v * gains)[:, :, None]).squeeze(-1))[:, :k]
        dcg = (expected_gains * rank_discounts(k, scores.device, scores.dtype)).sum(dim=-1)
        idcg = ideal_dcg(gains, k)
        ndcg = dcg / (idcg + DEFAULT_EPS)
        return -mean_over(ndcg, idcg > 0)
