"""The eleven ranking losses of the LearnDCG study, behind one factory.

    loss = make_loss(name, **params)      # a torch.nn.Module
    value = loss(scores, labels)          # scores, labels: [B, n]; labels padded with -1 -> scalar

Every loss is vectorised over the batch, device-agnostic, ignores padded documents (their scores
never reach the value or the gradient) and exposes ``tracked_parameters()`` / ``theta_gradients()``
(non-empty for the learnable LearnDCG only). Formulas and conventions are in each module's
docstring; the defaults are allRank's unless stated there.
"""
from __future__ import annotations

from torch import nn

from ltr.losses._common import PADDED_LABEL, RankingLoss
from ltr.losses.approxndcg import ApproxNDCG
from ltr.losses.lambdaloss import LambdaLoss
from ltr.losses.lambdarank import LambdaRank
from ltr.losses.learndcg import LearnDCG
from ltr.losses.listmle import ListMLE
from ltr.losses.listnet import ListNet
from ltr.losses.neuralloss import NeuralLoss
from ltr.losses.neuralndcg import NeuralNDCG
from ltr.losses.ranknet import RankNet
from ltr.losses.rmse import RMSE
from ltr.names import LOSS_NAMES


def _learndcg_fixed(**params) -> LearnDCG:
    return LearnDCG(**params, learnable=False)


_FACTORIES = {
    "ranknet": RankNet,
    "listnet": ListNet,
    "listmle": ListMLE,
    "rmse": RMSE,
    "lambdarank": LambdaRank,
    "lambdaloss": LambdaLoss,
    "approxndcg": ApproxNDCG,
    "neuralndcg": NeuralNDCG,
    "neuralloss": NeuralLoss,
    "learndcg": LearnDCG,
    "learndcg_fixed": _learndcg_fixed,
}


def make_loss(name: str, **params) -> nn.Module:
    """The loss ``name`` (one of ``LOSS_NAMES``, case-insensitive) built with ``params``."""
    key = name.lower()
    if key not in _FACTORIES:
        raise ValueError(f"unknown loss {name!r}; expected one of {', '.join(LOSS_NAMES)}")
    try:
        return _FACTORIES[key](**params)
    except TypeError as exc:
        raise TypeError(f"bad parameters for loss {name!r}: {exc}") from exc


__all__ = [
    "LOSS_NAMES",
    "PADDED_LABEL",
    "ApproxNDCG",
    "LambdaLoss",
    "LambdaRank",
    "LearnDCG",
    "ListMLE",
    "ListNet",
    "NeuralLoss",
    "NeuralNDCG",
    "RMSE",
    "RankNet",
    "RankingLoss",
    "make_loss",
]
