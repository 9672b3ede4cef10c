"""The ceiling a query-performance predictor of H2G can reach when one answer per query is drawn: how well
the other samples of the same generator foresee one sample's BERTScore and H2G set (issue 42).

A generator that samples its answer gives each query a BERTScore that varies from draw to draw, and the
study's H2G set is taken from one draw. No predictor read before the answer is drawn can foresee that
draw's noise, so the best any such predictor can do is to know each query's expected BERTScore. This
module estimates that best from the samples themselves, leaving one out: for each sample s, the
predictor is the mean BERTScore of the query over the *other* samples, the target sample s's BERTScore
and H2G set, scored as every predictor is (:mod:`pipeline.predict.evaluation`: Kendall τ-b, the AUC of
"not in s's H2G set", sMARE). The mean over the other samples is itself an estimate from a few draws, so
the figure is a conservative ceiling (a predictor knowing the exact expectation would do a little better).

Input: ``values`` ``{sample: {qid: BERTScore F1}}`` and ``sets`` ``{sample: [qids in H2G]}``, as
:func:`pipeline.study.sampling.sampling_spread` stores them (its result's ``values`` and ``sets``).
"""
from __future__ import annotations

import statistics
from typing import Mapping, Sequence

import numpy as np
from scipy import stats

from pipeline.predict.evaluation import MIN_QUERIES, scaled_rank_errors


def _summary(values: Sequence[float]) -> dict:
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0, "mean": None, "min": None, "max": None}
    return {"n": len(values), "mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def leave_one_out(values: Mapping, sets: Mapping) -> list[dict]:
    """Per sample s: τ-b between the mean of the other samples and s's BERTScore, the AUC of "not in s's
    H2G set" scored by that mean, and sMARE, over the queries s scores that another sample scores too."""
    from sklearn.metrics import roc_auc_score

    samples = [str(s) for s in values]
    per = {str(s): v for s, v in values.items()}
    hard = {str(s): set(v) for s, v in sets.items()}
    out = []
    for s in samples:
        others = [per[o] for o in samples if o != s]
        qids = [q for q in per[s] if any(q in o for o in others)]
        row = {"sample": s, "n": len(qids), "kendall_tau": None, "auc": None, "smare": None}
        if len(qids) >= MIN_QUERIES:
            x = np.array([statistics.fmean(o[q] for o in others if q in o) for q in qids])
            y = np.array([per[s][q] for q in qids])
            easy = np.array([q not in hard.get(s, set()) for q in qids])
            row["kendall_tau"] = float(stats.kendalltau(x, y, variant="b").statistic)
            row["smare"] = float(scaled_rank_errors(x, y).mean())
            if easy.any() and not easy.all():
                row["auc"] = float(roc_auc_score(easy, x))
        out.append(row)
    return out


def sampling_ceiling(values: Mapping, sets: Mapping) -> dict:
    """The leave-one-sample-out rows and, for τ, AUC and sMARE, their mean, min and max over the samples."""
    if len(values) < 2:
        raise ValueError(f"a ceiling from samples needs at least 2 samples, got {len(values)}")
    rows = leave_one_out(values, sets)
    return {"rows": rows, **{key: _summary([r[key] for r in rows]) for key in ("kendall_tau", "auc", "smare")},
            "note": "leave one sample out: the other samples' mean BERTScore per query as the predictor of one "
                    "sample's BERTScore and H2G set (a conservative ceiling: the mean is itself estimated)"}
