"""Pointwise RMSE on sigmoid outputs, allRank's ``pointwise_rmse(sigmoid(s), y, no_of_levels)``:

    L = mean over queries of  sqrt( mean_i (y_i - L_levels * sigmoid(s_i))^2 )

``n_levels`` is the number of relevance grades of the data set (3 for MQ2007/2008, 5 for
WEB10K/Yahoo): a run's default is ``max_grade + 1`` of its data set (:meth:`RMSE.dataset_defaults`);
5 (grades 0-4) otherwise. The mean squared
error is clamped at 1e-12 before the square root so a perfect fit has a finite gradient.
"""
from __future__ import annotations

import torch
from typing import Mapping

from torch import Tensor

from ltr.losses import register_loss
from ltr.losses._common import RankingLoss, TrainingData, check_batch, mean_over, real_labels, real_scores


@register_loss("rmse", order=4)
class RMSE(RankingLoss):
    def __init__(self, n_levels: int = 5):
        super().__init__()
        if n_levels < 1:
            raise ValueError(f"n_levels must be >= 1, got {n_levels}")
        self.n_levels = int(n_levels)

    @classmethod
    def dataset_defaults(cls, params: Mapping, data: TrainingData) -> dict:
        """The scale is the data set's number of grades (3 for MQ2007/2008, 5 for WEB10K/Yahoo), not a fixed 5."""
        return {"n_levels": int(data.max_grade) + 1}

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        y = real_labels(labels, real, scores.dtype)
        errors = torch.where(real, y - self.n_levels * torch.sigmoid(real_scores(scores, real)), torch.zeros_like(y))
        n_real = real.sum(dim=-1)
        mse = (errors**2).sum(dim=-1) / n_real.clamp(min=1)
        return mean_over(torch.sqrt(mse.clamp(min=1e-12)), n_real > 0)
