"""The judge-agreement benchmark's sample, figures and stored result (``bench/bench_judge.py`` runs it).

A fixed sample of judged pairs, ``per_grade`` per NIST grade 0-3 (a seeded permutation per grade, its
first ``per_grade``: a larger sample contains a smaller one), is judged by each model; every judge,
the imported ones included, is scored against NIST on the same pairs:

- parse rate (pairs with a valid label, of all);
- over the parsed pairs: binary agreement and Cohen's kappa with relevant = grade >= 2 on both sides
  (the study's binary setup), graded exact agreement and agreement within one grade;
- for the log-probability judge (expected grade E): binary at E >= 1.5, graded as round(E), and the
  AUC of E for NIST-relevant pairs.

A run writes each model's **model card** (:func:`model_card`, :mod:`pipeline.llm.model_cards`: the sample,
per-pair labels, figures, date, commit, model file and prompt), kept in the repository; the provenance
note of the model and :func:`benchmark_line` (the Failure overlap page, next to the judge's H2J set) read
it. ``cache/bench/judge_agreement.json`` is only the run's working file.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np

from core import paths
from core.atomic import atomic_write_text
from pipeline.llm import model_cards
from pipeline.llm.gguf_models import DEFAULT_MODEL
from pipeline.llm.model_cards import sample_words  # noqa: F401  (re-exported: bench/rerun_summary.py)
from pipeline.stats.agreement import KAPPA_UNDEFINED, cohen_kappa, kappa_text

RESULT_NAME = "judge_agreement.json"
LOGPROB_CONVENTION = "expected grade E over the digits 0-3: binary at E >= 1.5, graded round(E), AUC of E"


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
    and, when undefined, ``kappa_undefined`` with the reason (:mod:`pipeline.stats.agreement`)."""
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
    """The benchmark run's working file (``bench_judge.py``: shards and models merge into it); what the
    pipeline shows is read from the model cards, never from this file."""
    return paths.cache_subdir("bench") / RESULT_NAME


def judge_definition(options) -> dict:
    """The judge a card's labels come from: UMBRELA's prompt (its template text and sha256), the decoding
    ``options`` and the conventions the figures use."""
    from importlib.metadata import PackageNotFoundError, version

    from pipeline.judging.judgments import UMBRELA_PROMPT_FILE, UMBRELA_SYSTEM, umbrela_template

    template = umbrela_template()
    try:
        umbrela = version("umbrela")
    except PackageNotFoundError:
        umbrela = None
    return {"prompt": f"UMBRELA graded prompt ({UMBRELA_PROMPT_FILE} of umbrela {umbrela}), zero-shot",
            "umbrela_version": umbrela, "system": UMBRELA_SYSTEM, "template": template,
            "template_sha256": hashlib.sha256(template.encode("utf-8")).hexdigest(), "options": options.as_dict(),
            "binary": "relevant = grade >= 2, on both sides", "logprob": LOGPROB_CONVENTION}


def card_pairs(scored, labels: dict, expected: dict, references: dict) -> list[dict]:
    """A card's per-pair rows: ``labels[(qid, pid)]`` (missing: unreadable, None), the log-probability
    ``expected`` grade where there is one, and each imported judge's label (``references[name][(qid, pid)]``)."""
    rows = []
    for q, p in scored:
        row = {"qid": q, "pid": p, "label": labels.get((q, p))}
        if (q, p) in expected:
            row["expected"] = expected[(q, p)]
        row["references"] = {name: refs[(q, p)] for name, refs in references.items() if (q, p) in refs}
        rows.append(row)
    return rows


def card_figures(card: dict, nist) -> dict:
    """The figures of a card, recomputed from its per-pair labels and ``nist[(qid, pid)]`` (the NIST grade):
    ``figures`` (the model's) and ``references`` (each imported judge's on the same pairs)."""
    rows = card["pairs"]
    pairs = [(r["qid"], r["pid"]) for r in rows]
    labels = {pair: r["label"] for pair, r in zip(pairs, rows) if r.get("label") is not None}
    expected = {pair: r["expected"] for pair, r in zip(pairs, rows) if r.get("expected") is not None}
    names = sorted({name for r in rows for name in r.get("references", {})})
    references = {name: agreement(pairs, nist, {pair: r["references"][name] for pair, r in zip(pairs, rows)
                                                if r.get("references", {}).get(name) is not None})
                  for name in names}
    return {"figures": agreement(pairs, nist, labels, expected=expected or None), "references": references}


def model_card(model: dict, *, dataset: str, sample: dict, sample_pairs, rows: list[dict], nist, judge: dict,
               measured: dict) -> dict:
    """The model card of one benchmark run (see :mod:`pipeline.llm.model_cards` for the fields); its
    figures are computed from ``rows`` exactly as the card test recomputes them."""
    card = {"card_version": model_cards.CARD_VERSION, "model": model, "dataset": dataset,
            "sample": {**sample, "pairs": [list(p) for p in sample_pairs]}, "judge": judge, "measured": measured,
            "pairs": rows}
    # through JSON, so the stored figures are what a reader of the stored labels recomputes
    return json.loads(json.dumps({**card, **card_figures(card, nist)}))


def write_card(card: dict, folder=None):
    path = model_cards.card_path(card["model"]["key"], folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(card, indent=1, ensure_ascii=False) + "\n")
    return path


def benchmark_line(provenance: dict, folder=None) -> str | None:
    """How the judge with ``provenance`` did on the judge benchmark, from the model cards (an embedded model:
    its own card; an imported judge: its labels scored on the pairs of the default model's card, else of the
    card with the most pairs), or None when no card measured it."""
    cards = model_cards.all_cards(folder)
    if provenance.get("backend") == "imported":
        with_it = [c for c in cards if provenance.get("model") in c.get("references", {})]
        card = next((c for c in with_it if c["model"]["key"] == DEFAULT_MODEL), None) or \
            max(with_it, key=lambda c: len(c["pairs"]), default=None)
        fig = card["references"][provenance["model"]] if card else None
    else:  # by the file's sha256 (the digest); a record without one, by name
        card = next((c for c in cards if provenance.get("digest") and c["model"].get("sha256") == provenance["digest"]),
                    None) or next((c for c in cards if not provenance.get("digest")
                                   and c["model"].get("name") == provenance.get("model")), None)
        fig = card["figures"] if card else None
    if not fig:
        return None
    return (f"Judge benchmark ({model_cards.scored_words(card, fig)}; {model_cards.provenance_words(card)}): "
            f"{model_cards.figures_words(fig)}")
