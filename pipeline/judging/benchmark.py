"""The judge-agreement benchmark's sample, figures and stored result (``bench/bench_judge.py`` runs it).

A fixed sample of judged pairs, ``per_grade`` per NIST grade 0-3 (a seeded permutation per grade, its
first ``per_grade``: a larger sample contains a smaller one), is judged by each model; every judge,
the imported ones included, is scored against NIST on the same pairs:

- parse rate (pairs with a valid label, of all);
- over the parsed pairs: binary agreement and Cohen's kappa with relevant = grade >= 2 on both sides
  (the study's binary setup), graded exact agreement and agreement within one grade;
- for the log-probability judge (expected grade E): binary at E >= 1.5, graded as round(E), and the
  AUC of E for NIST-relevant pairs.

The result lives in ``cache/bench/judge_agreement.json``; :func:`benchmark_line` says, for a judge's
provenance, how it did there (the Failure overlap page shows it next to the judge's H2J set).
"""
from __future__ import annotations

import json

import numpy as np

from core import paths
from pipeline.stats import KAPPA_UNDEFINED, cohen_kappa, kappa_text

RESULT_NAME = "judge_agreement.json"


def stratified_sample(qrels, has_text, per_grade: int, seed: int) -> list[tuple[str, str]]:
    """``per_grade`` (qid, pid) pairs of each NIST grade 0-3 among those whose passage ``has_text``.

    The pairs come round-robin across the grades (a grade 0 pair, a grade 1 pair, ...), because a run is judged in
    this order: a run stopped early, or a shard ``[k::n]`` with ``n`` prime to 4, then still holds every grade
    equally, instead of only the low grades."""
    strata = []
    for grade in range(4):
        pool = sorted((q, p) for q, judged in qrels.items() for p, g in judged.items() if g == grade and has_text(p))
        order = np.random.default_rng([seed, grade]).permutation(len(pool))
        strata.append([pool[i] for i in order[:per_grade]])
    return [stratum[rank] for rank in range(per_grade) for stratum in strata if rank < len(stratum)]


def _kappa(a, b) -> dict:
    """``kappa`` (None when undefined: NIST and the judge gave one and the same binary answer to every pair)
    and, when undefined, ``kappa_undefined`` with the reason (:mod:`pipeline.stats`)."""
    kappa = cohen_kappa(a, b)
    return {"kappa": kappa} if kappa is not None else {"kappa": None, "kappa_undefined": KAPPA_UNDEFINED}


def agreement(pairs, nist, labels: dict, *, expected: dict | None = None) -> dict:
    """The figures of one judge's ``labels[(qid, pid)]`` (0-3) against ``nist`` over ``pairs``."""
    parsed = [p for p in pairs if p in labels]
    out = {"n_pairs": len(pairs), "n_parsed": len(parsed), "parse_rate": len(parsed) / len(pairs) if pairs else None}
    if parsed:
        h = np.array([nist[p] for p in parsed])
        j = np.array([labels[p] for p in parsed])
        hb, jb = h >= 2, j >= 2
        out.update(binary_agreement=float((hb == jb).mean()), **_kappa(hb.tolist(), jb.tolist()),
                   graded_exact=float((h == j).mean()), graded_within_1=float((abs(h - j) <= 1).mean()),
                   label_counts={str(g): int((j == g).sum()) for g in range(4)})
    scored = [p for p in pairs if expected and p in expected]
    if scored:
        from sklearn.metrics import roc_auc_score

        h = np.array([nist[p] for p in scored])
        e = np.array([expected[p] for p in scored])
        hb, eb = h >= 2, e >= 1.5
        out["logprob"] = {"n_scored": len(scored), "binary_agreement": float((hb == eb).mean()),
                          **_kappa(hb.tolist(), eb.tolist()), "graded_exact": float((h == np.rint(e)).mean()),
                          "graded_within_1": float((abs(h - np.rint(e)) <= 1).mean()),
                          "auc_binary": float(roc_auc_score(hb, e)) if len(set(hb.tolist())) > 1 else None,
                          "mean_expected_by_nist_grade": {str(g): float(e[h == g].mean()) for g in range(4)
                                                          if (h == g).any()}}
    return out


def result_path():
    return paths.cache_subdir("bench") / RESULT_NAME


def load_result() -> dict | None:
    path = paths.cache_dir() / "bench" / RESULT_NAME
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, json.JSONDecodeError):
        return None


def _figures_line(fig: dict) -> str:
    if "kappa" not in fig:
        return f"parse rate {fig.get('parse_rate', 0):.0%}"
    return (f"kappa {kappa_text(fig['kappa'])} (binary at grade 2, agreement {fig['binary_agreement']:.0%}), graded exact "
            f"{fig['graded_exact']:.0%}, within one grade {fig['graded_within_1']:.0%}, parse rate "
            f"{fig['parse_rate']:.0%}" + _logprob_words(fig.get("logprob")))


def _logprob_words(logprob: dict | None) -> str:
    if not logprob or logprob.get("auc_binary") is None:
        return ""
    return (f"; its expected grade over the digits 0-3 separates relevant from non-relevant pairs with AUC "
            f"{logprob['auc_binary']:.2f} (kappa {kappa_text(logprob['kappa'])} at 1.5)")


def benchmark_line(provenance: dict, result: dict | None = None) -> str | None:
    """How the judge with ``provenance`` did on the stored benchmark, or None when it was not measured."""
    result = result if result is not None else load_result()
    if not result:
        return None
    sample = result.get("sample", {})
    model = provenance.get("model")
    if provenance.get("backend") == "imported":
        fig = result.get("references", {}).get(model)
    else:
        fig = next((m for m in result.get("models", {}).values() if m.get("model") == model and "error" not in m), None)
    if not fig:
        return None
    return f"Judge benchmark ({_sample_words(result, fig)}): {_figures_line(fig)}"


def sample_words(result: dict) -> str:
    """Which pairs a stored benchmark ``result`` rests on: the stratified sample, or an H2J run's pairs
    (``--h2j-cap``)."""
    sample, dataset = result.get("sample", {}), result.get("dataset", "").upper()
    n = sample.get("n_pairs")
    if "h2j_cap" in sample:
        return f"the {n} {dataset} pairs an H2J run at cap {sample['h2j_cap']} judges"
    return f"{n} {dataset} pairs, {sample.get('per_grade')} per NIST grade"


def _sample_words(result: dict, fig: dict) -> str:
    """:func:`sample_words`, and how many of the pairs this judge was scored on when a ``--cached-only`` run
    reached only some."""
    words, n = sample_words(result), result.get("sample", {}).get("n_pairs")
    scored = fig.get("n_pairs", n)
    return words if scored == n else f"{words}; scored on the {scored} it reached"
