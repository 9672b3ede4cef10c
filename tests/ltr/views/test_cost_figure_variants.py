"""The Results page's NDCG-vs-time scatter (``ltr.views.results.cost_figure``) with loss variants: the study grid
gives LearnDCG its parameters, so its row is ``learndcg(normalisation=standard)``. That row is still LearnDCG's
(its colour, marker and larger size), not the fallback every unknown name shares."""
from __future__ import annotations

import pandas as pd

from ltr.views.results import cost_figure


def _row(loss: str, ndcg: float) -> dict:
    return {"loss": loss, "folds": 2, "minutes_mean": 0.5, "minutes_min": 0.4, "minutes_max": 0.6,
            "ndcg_mean": ndcg, "ndcg_min": ndcg - 0.01, "ndcg_max": ndcg + 0.01}


def _markers(table: pd.DataFrame) -> dict:
    return {t.name: (t.marker.size, t.marker.color, t.marker.symbol) for t in cost_figure(table, 10, title="t").data}


def test_a_learndcg_variant_is_drawn_as_learndcg():
    plain = _markers(pd.DataFrame([_row("approxndcg", 0.70), _row("learndcg", 0.72)]))
    variants = _markers(pd.DataFrame([_row("approxndcg", 0.70), _row("learndcg(normalisation=standard)", 0.72),
                                      _row("listnet(temperature=2)", 0.69)]))
    assert variants["learndcg(normalisation=standard)"] == plain["learndcg"] and plain["learndcg"][0] == 16
    assert variants["approxndcg"] == plain["approxndcg"] and plain["approxndcg"][0] == 12
    assert variants["listnet(temperature=2)"][1:] != variants["learndcg(normalisation=standard)"][1:]
