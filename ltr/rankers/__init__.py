"""Neural rankers: ``make_ranker(name, n_features, **params)`` for the names in ``RANKER_NAMES``.

Every ranker maps ``features [B, n, F]`` and ``mask [B, n]`` (bool, True = real document) to
scores ``[B, n]``; padded documents never influence real documents' scores, and their own score
is 0 (losses ignore them through the -1 labels).
"""
from __future__ import annotations

import inspect

from torch import nn

from ltr.rankers.attention_mil import AttentionMILRanker
from ltr.rankers.attsets import AttSetsRanker
from ltr.rankers.context_aware import ContextAwareRanker
from ltr.rankers.mlp import MLPRanker

RANKERS: dict[str, type[nn.Module]] = {
    "mlp": MLPRanker,
    "attsets": AttSetsRanker,
    "attention_mil": AttentionMILRanker,
    "context_aware": ContextAwareRanker,
}
RANKER_NAMES = tuple(RANKERS)


def make_ranker(name: str, n_features: int, **params) -> nn.Module:
    """Build ranker ``name``; unknown names or parameters raise ``ValueError`` listing the valid ones."""
    if name not in RANKERS:
        raise ValueError(f"unknown ranker {name!r}; choose from {', '.join(RANKER_NAMES)}")
    cls = RANKERS[name]
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "n_features")]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for ranker {name!r}; accepted: {accepted}")
    return cls(int(n_features), **params)
