"""Agreement statistics shared by the pipeline's figures: one Cohen's kappa for every comparison (two
annotators' reasons in :mod:`pipeline.annotation.validation`, a judge against NIST in
:mod:`pipeline.judging.benchmark`), so the same raters get the same answer everywhere.

Cohen's kappa: κ = (p_o − p_e) / (1 − p_e) (``sklearn.metrics.cohen_kappa_score``). It is *undefined*
when p_e = 1: both raters gave one and the same answer to every item, so no agreement beyond chance
can be shown or ruled out. sklearn returns nan there; here it is ``None`` with :data:`KAPPA_UNDEFINED`
as the reason, and is shown as "undefined" -- never as 0 or 1.
"""
from __future__ import annotations

from typing import Sequence

KAPPA_UNDEFINED = "undefined: both raters gave the same answer to every item (expected agreement 1)"


def cohen_kappa(a: Sequence, b: Sequence) -> float | None:
    """Cohen's kappa of two raters' answers ``a[i]``, ``b[i]`` to the same items; None when undefined
    (no items, or one and the same answer from both to every item)."""
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: {len(a)} answers against {len(b)}")
    a, b = [_plain(x) for x in a], [_plain(y) for y in b]
    if not a or len(set(a) | set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(a, b))


def kappa_text(kappa: float | None, digits: int = 2) -> str:
    """A kappa as shown: its value, or "undefined"."""
    return "undefined" if kappa is None else f"{kappa:.{digits}f}"


def _plain(value):
    """numpy scalars as Python values (so True and np.True_ count as one answer)."""
    return value.item() if hasattr(value, "item") else value


def cohen_kappa_counts(confusion) -> "np.ndarray":
    """The same κ from confusion counts ``confusion[..., i, j]`` (rater a's answer i, rater b's answer j),
    over any leading axes at once: many bootstrap resamples' summed counts without one sklearn call each.
    NaN where undefined (no items, or p_e = 1), as :func:`cohen_kappa` gives None."""
    import numpy as np

    counts = np.asarray(confusion, dtype=float)
    total = counts.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.trace(counts, axis1=-2, axis2=-1) / total
        expected = (counts.sum(axis=-1) * counts.sum(axis=-2)).sum(axis=-1) / total ** 2
        kappa = (observed - expected) / (1.0 - expected)
    return np.where((total > 0) & (expected < 1.0 - 1e-12), kappa, np.nan)
