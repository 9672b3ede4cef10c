"""The eleven ranking losses of the LearnDCG study, and an identifiable LearnDCG, behind one factory.

    loss = make_loss(name, **params)      # a torch.nn.Module
    value = loss(scores, labels)          # scores, labels: [B, n]; labels padded with -1 -> scalar

Every loss is vectorised over the batch, device-agnostic, ignores padded documents (their scores
never reach the value or the gradient) and exposes ``tracked_parameters()`` / ``theta_gradients()``
(non-empty for the learnable LearnDCG variants only). Formulas and conventions are in each module's
docstring; the defaults are allRank's unless stated there.

``learndcg_fixed`` at its defaults (b_g = b_d = 2, alpha = 1, standard ideal DCG) is ApproxNDCG(alpha=1)
bit for bit: :func:`canonical_loss` maps it to ``approxndcg``, so a grid trains it once and the report
lists it under both names, marked identical by construction. With other parameters it is its own loss.
"""
from __future__ import annotations

from torch import nn

from ltr.losses._common import PADDED_LABEL, RankingLoss
from ltr.losses.approxndcg import ApproxNDCG
from ltr.losses.lambdaloss import LambdaLoss
from ltr.losses.lambdarank import LambdaRank
from ltr.losses.learndcg import LearnDCG
from ltr.losses.learndcg_meta import LearnDCGMeta
from ltr.losses.listmle import ListMLE
from ltr.losses.listnet import ListNet
from ltr.losses.neuralloss import NeuralLoss
from ltr.losses.neuralndcg import NeuralNDCG
from ltr.losses.ranknet import RankNet
from ltr.losses.rmse import RMSE
from ltr.names import IDENTICAL_AT_DEFAULTS, LEARNABLE_LOSSES, LOSS_NAMES


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
    "learndcg_meta": LearnDCGMeta,
}
# learndcg_fixed's defaults, at which it is reported as its twin (ltr.names.IDENTICAL_AT_DEFAULTS)
_FIXED_DEFAULTS = {"b_g": 2.0, "b_d": 2.0, "alpha": 1.0, "normalisation": "standard"}


def canonical_loss(name: str, params: dict | None = None) -> tuple[str, dict]:
    """``(name, params)`` of the loss that computes exactly the same values and gradients.

    Only ``learndcg_fixed`` with every parameter at its default maps elsewhere (to ``approxndcg``
    with no parameters); everything else is returned as given (name lower-cased).
    """
    key, params = name.lower(), dict(params or {})
    if key in IDENTICAL_AT_DEFAULTS and all(k in _FIXED_DEFAULTS and params[k] == _FIXED_DEFAULTS[k] for k in params):
        return IDENTICAL_AT_DEFAULTS[key][0], {}
    return key, params


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
    "IDENTICAL_AT_DEFAULTS",
    "LEARNABLE_LOSSES",
    "LearnDCG",
    "LearnDCGMeta",
    "ListMLE",
    "ListNet",
    "NeuralLoss",
    "NeuralNDCG",
    "RMSE",
    "RankNet",
    "RankingLoss",
    "canonical_loss",
    "make_loss",
]
