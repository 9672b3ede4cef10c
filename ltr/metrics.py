"""NDCG@k on padded batches of ranked lists.

    DCG@k  = sum_{r=1..k} gain(y_(r)) / log2(1 + r),     y_(r) = label of the document ranked r-th
    NDCG@k = DCG@k / IDCG@k,                             IDCG@k = DCG@k of the labels sorted descending

Conventions (explicit options, defaults are allRank's and LightGBM's):

- ``gain="exp"``: 2^y - 1 (default);  ``gain="linear"``: y (trec_eval / ir_measures).
- ``no_relevant`` - a query whose IDCG is 0 (no document with gain > 0):
  ``"one"`` scores 1 (allRank ``filler_value=1``, LightGBM; default), ``"zero"`` scores 0 (trec_eval),
  ``"exclude"`` yields NaN so that ``nanmean`` leaves the query out.
- Ties in the scores are broken by document order (stable sort), so results are deterministic.
  (trec_eval breaks ties by docno instead: give distinct scores when comparing with it.)
- Labels are padded with -1; padded documents are ranked last and have gain 0.
- k larger than a list counts the whole list (as allRank and trec_eval do).

Metrics are evaluation only: they are computed without gradient, in float64.
"""
from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor

from ltr.ndcg_conventions import GAINS, NDCG_CUTOFFS, NO_RELEVANT, N_RELEVANT, metric_name
from ltr.losses._common import check_batch, rank_discounts, ranking_order, real_labels



def ndcg_at_k(scores: Tensor, labels: Tensor, k: int, *, gain: str = "exp", no_relevant: str = "one") -> Tensor:
    """NDCG@k per query, ``[B]``. See the module docstring for the conventions."""
    return ndcg_table(scores, labels, (k,), gain=gain, no_relevant=no_relevant)[k]


@torch.no_grad()
def ndcg_table(
    scores: Tensor,
    labels: Tensor,
    ks: Iterable[int] = NDCG_CUTOFFS,
    *,
    gain: str = "exp",
    no_relevant: str = "one",
) -> dict[int, Tensor]:
    """``{k: NDCG@k per query [B]}`` for every k in ``ks``; the list is sorted once for all k."""
    ks = tuple(ks)
    if not ks or any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in ks):
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    if no_relevant not in NO_RELEVANT:
        raise ValueError(f"no_relevant must be one of {NO_RELEVANT}, got {no_relevant!r}")
    real = check_batch(scores, labels)
    out_dtype = scores.dtype
    y = real_labels(labels, real, torch.float64)
    gains = torch.pow(2.0, y) - 1.0 if gain == "exp" else y

    ranked = torch.gather(gains, 1, ranking_order(scores, real))
    ideal = torch.sort(gains, dim=-1, descending=True).values
    n = gains.shape[1]
    discounts = rank_discounts(n, gains.device, torch.float64)
    cum_dcg = torch.cumsum(ranked * discounts, dim=-1)
    cum_idcg = torch.cumsum(ideal * discounts, dim=-1)

    filler = {"one": 1.0, "zero": 0.0, "exclude": float("nan")}[no_relevant]
    table = {}
    for k in ks:
        at = min(k, n) - 1
        dcg, idcg = cum_dcg[:, at], cum_idcg[:, at]
        has_relevant = idcg > 0
        ndcg = torch.where(has_relevant, dcg / torch.where(has_relevant, idcg, 1.0), filler)
        table[k] = ndcg.to(out_dtype)
    return table
