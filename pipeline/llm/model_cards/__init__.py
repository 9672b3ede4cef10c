"""Model cards: what the judge benchmark measured for each embedded model, kept in the repository.

``<model-key>.json`` in this folder is written by ``bench/bench_judge.py``
(:func:`pipeline.judging.benchmark.model_card`) and is the one place a measured judge figure lives:
the provenance note of every result of an embedded model (:func:`pipeline.llm.backends.llamacpp.describe`)
and the Failure overlap page's benchmark line (:func:`pipeline.judging.benchmark.benchmark_line`)
read it. A model without a card (or whose card was measured on another file) says so: "not
measured on the benchmark". No figure is typed into code.

A card holds (version :data:`CARD_VERSION`):

- ``model``: key, name, the GGUF file's sha256 (the identity the card is valid for), quantisation,
  parameters, engine;
- ``dataset`` and ``sample``: the sample definition (rule, per_grade, seed, n_pairs) and
  ``sample["pairs"]``, every (qid, pid) of the sample in judging order;
- ``judge``: the prompt (UMBRELA's template text, its sha256, the system message), the decoding
  options and the binary and log-probability conventions;
- ``pairs``: the pairs the model was scored on (n, possibly fewer than the sample when a run was
  stopped), each with its label (0-3, None when unreadable), the log-probability expected grade where
  available, and the imported judges' labels (``references``);
- ``figures`` (the model's, :func:`pipeline.judging.benchmark.agreement` over ``pairs``) and
  ``references`` (each imported judge's figures on the same pairs);
- ``measured``: date, commit (and whether the tree had changes), threads, load average, seconds per
  judgment.

A test (``tests/pipeline/llm/test_model_cards.py``) recomputes every card's figures from its per-pair labels and
the NIST qrels and checks they equal the card's.
"""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.stats.agreement import kappa_text

CARD_DIR = Path(__file__).resolve().parent
CARD_VERSION = 1
NOT_MEASURED = "not measured on the benchmark"
REFERENCE_NAMES = {"llama-3.3-70b": "Llama-3.3-70B", "flan-t5-large": "FLAN-T5-large"}


def card_path(key: str, folder: Path | None = None) -> Path:
    return Path(folder or CARD_DIR) / f"{key}.json"


def load_card(key: str, folder: Path | None = None) -> dict | None:
    """The card of model ``key``, or None when there is none. A card that is not valid JSON is an error
    naming the file (it is part of the repository: a broken one is a bug, not "not measured")."""
    path = card_path(key, folder)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a valid model card: {exc}") from exc


def all_cards(folder: Path | None = None) -> list[dict]:
    return [load_card(p.stem, folder) for p in sorted(Path(folder or CARD_DIR).glob("*.json"))]


def card_for(sha256: str, folder: Path | None = None) -> dict | None:
    """The card measured on the model file with ``sha256``, or None."""
    return next((c for c in all_cards(folder) if sha256 and c.get("model", {}).get("sha256") == sha256), None)


def sample_words(result: dict) -> str:
    """Which pairs a benchmark ``result`` (a card, or a ``bench_judge.py`` result file) rests on: the stratified
    sample, or an H2J run's pairs (``--h2j-cap``)."""
    sample, dataset = result.get("sample", {}), result.get("dataset", "").upper()
    n = sample.get("n_pairs")
    if "h2j_cap" in sample:
        return f"the {n} {dataset} pairs an H2J run at cap {sample['h2j_cap']} judges"
    return f"{n} {dataset} pairs, {sample.get('per_grade')} per NIST grade"


def scored_words(result: dict, fig: dict) -> str:
    """:func:`sample_words`, and on how many of them a judge was scored when a run reached only some."""
    words, n = sample_words(result), result.get("sample", {}).get("n_pairs")
    scored = fig.get("n_pairs", n)
    return words if scored == n else f"{words}; scored on {scored} of them"


def figures_words(fig: dict) -> str:
    """A judge's figures against NIST, as every line shows them (kappa "undefined" where it is)."""
    if "binary_agreement" not in fig:
        return f"parse rate {fig.get('parse_rate') or 0:.0%}"
    counts = fig.get("label_counts")
    labels = f", labels 0/1/2/3 {'/'.join(str(counts.get(str(g), 0)) for g in range(4))}" if counts else ""
    return (f"kappa {kappa_text(fig.get('kappa'))} (binary at grade 2, agreement {fig['binary_agreement']:.0%}), "
            f"graded exact {fig['graded_exact']:.0%}, within one grade {fig['graded_within_1']:.0%}, parse rate "
            f"{fig['parse_rate']:.0%}{labels}" + _logprob_words(fig.get("logprob")))


def _logprob_words(logprob: dict | None) -> str:
    if not logprob or logprob.get("auc_binary") is None:
        return ""
    return (f"; its expected grade over the digits 0-3 separates relevant from non-relevant pairs with AUC "
            f"{logprob['auc_binary']:.2f} (kappa {kappa_text(logprob.get('kappa'))} at 1.5)")


def provenance_words(card: dict) -> str:
    """Where a card's figures come from: the card, when and at which commit they were measured."""
    measured = card.get("measured", {})
    commit = (measured.get("commit") or "unknown")[:10] + (" with local changes" if measured.get("dirty") else "")
    return f"model card {card['model']['key']}.json, measured {measured.get('date', '?')} at commit {commit}"


def judge_summary(card: dict) -> str:
    """How the card's model did as a relevance judge, and the imported judges on the same pairs."""
    refs = "; ".join(f"{REFERENCE_NAMES.get(name, name)}: kappa {kappa_text(fig.get('kappa'))}"
                     for name, fig in card.get("references", {}).items() if "binary_agreement" in fig)
    return (f"on the judge benchmark ({scored_words(card, card['figures'])}; {provenance_words(card)}): "
            f"{figures_words(card['figures'])}" + (f". On the same pairs {refs}" if refs else ""))


def judge_note(key: str, sha256: str, folder: Path | None = None) -> str:
    """The judge part of an embedded model's provenance note: its card's summary, or that it was not
    measured (no card, or a card measured on another file)."""
    card = load_card(key, folder)
    if card is None:
        return NOT_MEASURED
    measured_on = card.get("model", {}).get("sha256", "")
    if measured_on != sha256:
        return f"{NOT_MEASURED} (its model card was measured on another file, sha256 {measured_on[:12]})"
    return judge_summary(card)
