"""Neural rankers: ``make_ranker(name, n_features, **params)`` for the names in ``RANKER_NAMES``; importable
without torch.

Every ranker maps ``features [B, n, F]`` and ``mask [B, n]`` (bool, True = real document) to
scores ``[B, n]``; padded documents never influence real documents' scores, and their own score
is 0 (losses ignore them through the -1 labels).

Each ranker module declares its ranker where it defines it (:data:`RANKERS`, a
:class:`core.registry.Registry`)::

    @register_ranker("mlp", order=1)
    class MLPRanker(nn.Module): ...

so adding a ranker is one new module here; ``order`` is its place in the lists pages show. The names
are read from the modules' source (the Training page lists them without importing torch);
:func:`make_ranker` imports the module of the ranker it builds.
"""
from __future__ import annotations

import inspect

from core.registry import Registry

RANKERS = Registry("ltr.rankers", "register_ranker", "ranker")
register_ranker = RANKERS.register
RANKER_NAMES: tuple[str, ...] = RANKERS.names()


def make_ranker(name: str, n_features: int, **params):
    """Build ranker ``name``; unknown names or parameters raise ``ValueError`` listing the valid ones."""
    if name not in RANKERS.names():
        raise ValueError(f"unknown ranker {name!r}; choose from {', '.join(RANKERS.names())}")
    cls = RANKERS.load(name)
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "n_features")]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for ranker {name!r}; accepted: {accepted}")
    return cls(int(n_features), **params)


__all__ = ["RANKERS", "RANKER_NAMES", "make_ranker", "register_ranker"]
