"""The ranking losses of the LearnDCG study by name, and the factory that builds them; importable without torch.

    loss = make_loss(name, **params)      # a torch.nn.Module (ltr.losses._common.RankingLoss)
    value = loss(scores, labels)          # scores, labels: [B, n]; labels padded with -1 -> scalar

Each loss module declares its losses where it defines them (:data:`LOSSES`, a :class:`core.registry.Registry`)::

    @register_loss("ranknet", order=1)
    class RankNet(RankingLoss): ...

with ``order`` (its place in the study order that tables and pages follow), ``learnable=True`` for
losses with learnable parameters (trained at the loss-parameter learning rate ``loss_lr``; they log θ),
``label`` where tables should name it otherwise than by its name (:func:`loss_label`), and, for a loss that equals
another at its default parameters, ``twin`` (that loss), ``twin_note``
(why) and ``twin_defaults`` (those parameters). Adding a loss is one new module in this package. The
names and that metadata are read from the modules' source, so tables and pages (the Results and
Training pages) list and sort losses without importing torch; :func:`make_loss` imports the module
of the loss it builds.

Every loss is vectorised over the batch, device-agnostic, ignores padded documents (their scores
never reach the value or the gradient) and exposes ``tracked_parameters()`` / ``theta_gradients()``
(non-empty for the learnable LearnDCG variants only). Formulas and conventions are in each module's
docstring; the defaults are allRank's unless stated there.

``learndcg_fixed`` at its defaults (b_g = b_d = 2, alpha = 1, standard ideal DCG) is ApproxNDCG(alpha=1)
bit for bit: :func:`canonical_loss` maps it to ``approxndcg``, so a grid trains it once and the report
lists it under both names, marked identical by construction. With other parameters it is its own loss.
"""
from __future__ import annotations

from core.registry import Registry

LOSSES = Registry("ltr.losses", "register_loss", "loss")
register_loss = LOSSES.register

# The study's losses in study order, as the package's source declares them.
LOSS_NAMES: tuple[str, ...] = LOSSES.names()
# Losses with learnable parameters (trained at the loss-parameter learning rate ``loss_lr``; they log θ).
LEARNABLE_LOSSES: tuple[str, ...] = tuple(name for name in LOSS_NAMES if LOSSES.info(name).get("learnable"))
# Losses whose first build pays a one-time pre-training that later runs load from the cache (NeuralLoss's surrogate):
# a grid lets one worker pay it while the others train other runs (ltr.grid).
PRETRAINED_ONCE: tuple[str, ...] = tuple(name for name in LOSS_NAMES if LOSSES.info(name).get("pretrains_once"))
# name -> (the loss it equals at its default parameters, why); see canonical_loss
IDENTICAL_AT_DEFAULTS: dict[str, tuple[str, str]] = {
    name: (info["twin"], info["twin_note"]) for name in LOSS_NAMES if "twin" in (info := LOSSES.info(name))}


def loss_label(name: str) -> str:
    """How tables name a loss (or a variant of one, ``loss(...)``): its declared ``label`` where it has one
    (``rmse``: "RMSE (allRank + mean-grade offset)", which says it is not allRank's formula as is), else its name."""
    text = str(name)
    base, sep, rest = text.partition("(")
    declared = LOSSES.declarations().get(base.strip().lower())
    if declared is None or "label" not in declared.info:
        return text
    return declared.info["label"] + (f" ({rest}" if sep else "")


def canonical_loss(name: str, params: dict | None = None) -> tuple[str, dict]:
    """``(name, params)`` of the loss that computes exactly the same values and gradients.

    Only a loss declared with a ``twin`` (``learndcg_fixed``) with every parameter at its
    ``twin_defaults`` maps elsewhere (to its twin with no parameters); everything else is returned as
    given (name lower-cased).
    """
    key, params = name.lower(), dict(params or {})
    declared = LOSSES.declarations().get(key)
    if declared is not None and "twin" in declared.info:
        defaults = declared.info["twin_defaults"]
        if all(k in defaults and params[k] == defaults[k] for k in params):
            return declared.info["twin"], {}
    return key, params


def make_loss(name: str, **params):
    """The loss ``name`` (one of :data:`LOSSES`' names, case-insensitive) built with ``params``."""
    key = name.lower()
    if key not in LOSSES.names():
        raise ValueError(f"unknown loss {name!r}; expected one of {', '.join(LOSSES.names())}")
    factory = LOSSES.load(key)
    try:
        return factory(**params)
    except TypeError as exc:
        raise TypeError(f"bad parameters for loss {name!r}: {exc}") from exc


__all__ = ["IDENTICAL_AT_DEFAULTS", "LEARNABLE_LOSSES", "LOSSES", "LOSS_NAMES", "canonical_loss", "loss_label",
           "make_loss", "register_loss"]
