"""Shared conventions of the ranking losses: padding, masks, sorting, gains and reductions.

Batches are padded lists: ``scores`` and ``labels`` of shape ``[B, n]``, padded documents carry the
label ``-1`` (allRank's ``PADDED_Y_VALUE``). Every helper here takes the mask ``real`` (True = a real
document) and never lets a padded score reach a value that is kept: padded scores are replaced with
``torch.where`` (not multiplied by 0, so an ``inf``/``NaN`` in a padded slot cannot leak into the
loss or its gradient).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import torch
from torch import Tensor, nn

PADDED_LABEL = -1.0
# allRank's DEFAULT_EPS: clamps probabilities and ideal DCGs away from 0 (kept for parity).
DEFAULT_EPS = 1e-10


@dataclass(frozen=True)
class TrainingData:
    """What a loss may take dataset-dependent defaults from (:meth:`RankingLoss.dataset_defaults`)."""

    max_grade: int  # the highest relevance grade: the data set's spec, else the training labels'
    list_lengths: np.ndarray  # documents per training list
    slate_length: int | None  # the run's slate length (None: whole lists)
    mean_grade: float | None = None  # the training labels' mean (RMSE's offset)
    # documents per list of the fold's training and validation splits together (never its test split):
    # NeuralLoss's surrogate lengths
    seen_list_lengths: np.ndarray | None = None


class RankingLoss(nn.Module):
    """Base of every loss: ``forward(scores [B, n], labels [B, n]) -> scalar``, with the trainer's hooks
    at their defaults, so the trainer calls them on any loss without knowing which it is:

    - ``tracked_parameters()`` / ``theta_gradients()`` report learnable loss parameters (empty here;
      LearnDCG overrides them) so the training loop can log them; ``tracked_tensor()`` gives the
      tracked values as one device tensor (None here: the step log then reads ``tracked_parameters()``);
      ``theta_tensors()`` the learnable θ by the names of ``theta_gradients()``, whose ``.grad`` the step
      log reads on the device (empty here: it reads ``theta_gradients()``);
    - ``has_hypergradient``: True for a loss whose parameters learn from the validation batches
      (LearnDCG-meta): the trainer hands it those once (``attach_validation``) and calls
      ``hypergradient_backward`` in place of ``value.backward()`` each step;
    - ``pretrain_seconds``: what building the loss spent pre-training (NeuralLoss's surrogate), or None;
      ``pretrain_key``: what every loss sharing that one-time pre-training has in common (the surrogate's cache
      key), and ``pretrain_paid``: whether building this loss did the pre-training (False: loaded from the
      cache); both None without pre-training. The cost figures share the one-time cost among the runs with
      the same key (:func:`ltr.cost.pretraining_shares`);
    - ``dataset_defaults(params, data)``: the parameters whose default depends on the data set (RMSE's
      number of grades, NeuralLoss's grade and length ranges), for the run to fill in where its explicit
      ``params`` leave them unset; none here.
    """

    has_hypergradient = False
    pretrain_seconds: float | None = None
    pretrain_key: str | None = None
    pretrain_paid: bool | None = None

    @classmethod
    def dataset_defaults(cls, params: Mapping, data: TrainingData) -> dict:
        """Defaults of the parameters that depend on the training data; explicit ``params`` win over them."""
        return {}

    def provenance(self) -> dict:
        """What a run's stored config records about how this loss was built beyond its parameters (NeuralLoss:
        its surrogate's key and what its lengths were taken from); empty here, and then nothing is recorded."""
        return {}

    def tracked_parameters(self) -> dict[str, float]:
        return {}

    def theta_gradients(self) -> dict[str, float]:
        return {}

    def tracked_tensor(self) -> Tensor | None:
        return None

    def theta_tensors(self) -> dict[str, Tensor]:
        return {}

    def attach_validation(self, batches) -> None:
        """Validation batches for a loss that learns from them (``has_hypergradient``); ignored here."""

    def hypergradient_backward(self, model: nn.Module, scores: Tensor, labels: Tensor, *, step: int,
                               lr: float) -> Tensor:
        """Fill the gradients of ranker and loss for this step; plain backpropagation here."""
        self(scores, labels).backward()
        return torch.tensor(float("nan"))


def check_batch(scores: Tensor, labels: Tensor) -> Tensor:
    """Validate a padded batch and return its mask of real documents ``[B, n]``."""
    if scores.dim() != 2 or scores.shape != labels.shape:
        raise ValueError(
            f"scores and labels must both be [B, n]; got {tuple(scores.shape)} and {tuple(labels.shape)}"
        )
    if not scores.is_floating_point():
        raise TypeError(f"scores must be a floating tensor, got {scores.dtype}")
    if scores.shape[1] == 0:
        raise ValueError("lists must have at least one slot (got n = 0)")
    return labels != PADDED_LABEL


def real_labels(labels: Tensor, real: Tensor, dtype: torch.dtype) -> Tensor:
    """Labels with padding replaced by 0 (so gains of padded slots are 0)."""
    return torch.where(real, labels, torch.zeros_like(labels)).to(dtype)


def real_scores(scores: Tensor, real: Tensor) -> Tensor:
    """Scores with padded slots replaced by 0 (gradient to padded slots is exactly 0)."""
    return torch.where(real, scores, torch.zeros_like(scores))


def pair_mask(real: Tensor, *, include_diagonal: bool = False) -> Tensor:
    """``[B, n, n]``: True where documents i and j are both real (and i != j unless asked)."""
    pairs = real[:, :, None] & real[:, None, :]
    if not include_diagonal:
        n = real.shape[1]
        pairs = pairs & ~torch.eye(n, dtype=torch.bool, device=real.device)
    return pairs


def ranking_order(scores: Tensor, real: Tensor) -> Tensor:
    """Indices sorting each list by score, descending; ties keep document order; padding last.

    Two stable sorts (score, then real-before-padded) give a lexicographic order without a
    sentinel value, so a real document scored ``-inf`` still ranks before padding.
    """
    by_score = torch.sort(scores.detach(), dim=-1, descending=True, stable=True).indices
    padded_sorted = torch.gather(~real, 1, by_score).to(torch.uint8)
    by_padding = torch.sort(padded_sorted, dim=-1, stable=True).indices
    return torch.gather(by_score, 1, by_padding)


def exp_gain(labels: Tensor) -> Tensor:
    """Exponential gain ``2^y - 1`` (labels already 0 at padding)."""
    return torch.pow(2.0, labels) - 1.0


def rank_discounts(n: int, device, dtype: torch.dtype) -> Tensor:
    """``1 / log2(1 + r)`` for ranks r = 1..n."""
    ranks = torch.arange(1, n + 1, device=device, dtype=dtype)
    return 1.0 / torch.log2(1.0 + ranks)


def ideal_dcg(gains: Tensor, k: int | None = None) -> Tensor:
    """DCG@k of the ideal order: gains sorted descending (padding has gain 0), log2 discount."""
    n = gains.shape[1]
    k = n if k is None else min(k, n)
    ideal = torch.sort(gains, dim=-1, descending=True).values[:, :k]
    return (ideal * rank_discounts(k, gains.device, gains.dtype)).sum(dim=-1)


def mean_over(values: Tensor, keep: Tensor) -> Tensor:
    """Mean of ``values[keep]`` without boolean indexing (no host sync); 0 when nothing is kept."""
    keep_f = keep.to(values.dtype)
    kept = torch.where(keep, values, torch.zeros_like(values))
    return kept.sum() / keep_f.sum().clamp(min=1.0)
