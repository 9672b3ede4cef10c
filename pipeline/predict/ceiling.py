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
    from pipeline.study.sampling import summary

    return summary([v for v in values if v is not None])


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


MEANING = ("another sample of the same generator predicting this one: no predictor of this target can be expected "
           "to do better")
# what must be equal between a prediction's H2G target and a stored h2g-samples result for the result's ceiling
# to bear on the target: the same BERTScore (encoder, its layer label, aggregate, partial references) and set rule
SCORING_KEYS = ("encoder", "label", "aggregate", "partial_references")


def _mismatch(result: Mapping, scoring: Mapping, quantile: float) -> list[str]:
    stored = result.get("bertscore") or {}
    out = [f"{key} {stored.get(key)!r} (this target: {scoring.get(key)!r})" for key in SCORING_KEYS
           if key in scoring and stored.get(key) != scoring.get(key)]
    if result.get("quantile") != quantile:
        out.append(f"quantile {result.get('quantile')} (this target: {quantile})")
    return out


def stored_ceiling(dataset: str, generator: str, scoring: Mapping, quantile: float) -> dict | None:
    """The sampling ceiling of the H2G target of ``generator`` on ``dataset`` from the newest stored
    h2g-samples result of that generator scored as the target is (``scoring``: the target's BERTScore
    provenance, :data:`SCORING_KEYS`; ``quantile``: its hard-set rule), with what it is (``meaning``) and
    the result it is read from; ``{"available": False, "reason": ...}`` when results of the generator exist
    but none is scored that way; None when none exists (``python -m pipeline h2g-samples`` makes one)."""
    from pipeline.study.sampling import stored_spreads

    found = [r for r in stored_spreads(dataset) if r["generator"] == generator]
    if not found:
        return None
    for result in found:
        if not _mismatch(result, scoring, quantile):
            return {"available": True, "result": result["id"], "generator": generator, "dataset": dataset,
                    "samples_file": result.get("samples_file"), "n_samples": len(result["samples"]),
                    "quantile": quantile, "meaning": MEANING, **sampling_ceiling(result["values"], result["sets"])}
    return {"available": False, "result": found[0]["id"], "generator": generator, "dataset": dataset,
            "meaning": MEANING,
            "reason": f"the stored h2g-samples result {found[0]['id'][:12]} of {generator} differs from this target in "
                      f"{'; '.join(_mismatch(found[0], scoring, quantile))}: rerun `python -m pipeline h2g-samples "
                      f"--dataset {dataset} --samples {generator}` with this prediction's settings"}


def ceiling_text(target: str, ceiling: Mapping) -> str:
    """One line of a :func:`stored_ceiling`: the CLI's, the page's and the export's words."""
    from pipeline.study.sampling import range_text

    if not ceiling.get("available"):
        return f"{ceiling['dataset']} {target}: no sampling ceiling: {ceiling['reason']}"
    return (f"{ceiling['dataset']} {target}: sampling ceiling τ {range_text(ceiling['kendall_tau'], '{:+.3f}')}, "
            f"AUC {range_text(ceiling['auc'], '{:.3f}')}, sMARE {range_text(ceiling['smare'], '{:.3f}')} "
            f"over {ceiling['n_samples']} samples (h2g-samples {ceiling['result'][:12]}; the other samples' mean predicting one sample) — {MEANING}")
