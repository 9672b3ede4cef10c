"""Judge-agreement benchmark: how well each offline model judges relevance, against NIST, on one fixed
sample of DL19 pairs; the imported Llama-3.3-70B and FLAN-T5-large labels are scored on the same pairs.

    python bench/bench_judge.py [--per-grade 50] [--seed 0] [--models smollm2,qwen2.5-coder-0.5b,...]

The sample: DL19 judged pairs whose passage has text, ``--per-grade`` per NIST grade 0-3, drawn with a
seeded permutation per grade (so a larger ``--per-grade`` contains the smaller sample: its answers
come from the response cache). Each model judges with the study's judge: UMBRELA's graded prompt
(pipeline.judging.judgments), binary = grade >= 2. Where the backend exposes log-probabilities, the
log-probability judge (expected grade over the digits 0-3) is scored too: binary at E >= 1.5, graded
as round(E), and the binary AUC of E.

Figures per judge: parse rate; over the parsed pairs, binary agreement and Cohen's kappa, graded exact
and within-1 agreement against NIST; seconds per judgment (wall, fresh calls only) and the load
average. The sample and figures are defined in :mod:`pipeline.judging.benchmark`.

Each model of a stratified run gets a **model card**, ``pipeline/llm/model_cards/<model-key>.json``
(``--card-dir`` to write elsewhere): the sample, the per-pair labels (with the imported judges' labels
on the same pairs), the figures, date, commit, model file sha256 and prompt. The card is what the
model's provenance note and the Failure overlap page show; commit it. A run stopped early is scored
with ``--cached-only`` (the pairs judged so far; the card says how many). The run's working file is
``cache/bench/judge_agreement.json``; the table is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.atomic import atomic_write_text  # noqa: E402
from core.export import git_state  # noqa: E402
from pipeline.judging.benchmark import (agreement, card_pairs, judge_definition, model_card, result_path,  # noqa: E402
                                        stratified_sample, write_card)
from pipeline.stats.agreement import kappa_text  # noqa: E402
from pipeline.judging.judgments import (judge_messages, llm_judgments, read_judgments_file,  # noqa: E402
                                        sample_pairs, umbrela_options)

DEFAULT_MODELS = ("smollm2", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
REFERENCES = ("llama-3.3-70b", "flan-t5-large")
# seconds per call (times the batch size): generous, because a call that times out fails the whole
# run (LLMUnavailable), and on a shared 2-core machine a batch of 1.5B judgments took over 16 minutes
TIMEOUT_S = 7200.0


class _Pairs:
    """The dataset restricted to the sample (what ``llm_judgments`` reads)."""

    def __init__(self, data):
        self.data = data
        self.passages = data.passages

    def require_qrels(self):
        return self.data.require_qrels()

    def queries(self):
        return self.data.queries()


def judge_model(key: str, data, pairs, *, cached_only: bool = False) -> tuple[dict, dict]:
    """``(figures and run facts, per-pair)``: per-pair holds the model (a GGUFModel), the judge options,
    the scored pairs and their labels and expected grades, for the model card."""
    from pipeline.llm import make_client
    from pipeline.llm.cache import request_key

    client = make_client(f"embedded:{key}", timeout=TIMEOUT_S)
    prov = client.provenance
    options = umbrela_options(client)
    queries = data.queries()
    keys = [request_key(prov, judge_messages(queries[q], data.passages[p], "graded", "umbrela"), options)
            for q, p in pairs]
    if cached_only:  # score the pairs already judged (by other processes), make no call
        kept = [i for i, key in enumerate(keys) if client.cache.get(key) is not None]
        pairs, keys = [pairs[i] for i in kept], [keys[i] for i in kept]
    fresh = sum(client.cache.get(key) is None for key in keys)
    start_load = time.perf_counter()
    if fresh:
        client.backend.prepare()
    load_s = time.perf_counter() - start_load
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    judged = llm_judgments(client, _Pairs(data), "graded", pairs=pairs, cap=None, progress=f"judge {key}")
    wall = time.perf_counter() - start
    # the engine's seconds per judgment as the cache recorded them (a batch's wall time shared by its
    # requests), so shards that ran in other processes count too
    stored = [hit.seconds for hit in map(client.cache.lookup, keys) if hit is not None and hit.seconds]
    labels = {(q, p): g for q, d in judged.labels.items() for p, g in d.items()}
    expected = {(q, p): e for q, d in judged.expected.items() for p, e in d.items()}
    nist = {(q, p): data.require_qrels()[q][p] for q, p in pairs}
    per_pair = {"model": client.backend.model, "options": options, "pairs": pairs, "labels": labels,
                "expected": expected}
    return {"model": prov.model, "spec": f"embedded:{key}", "provenance": prov.as_dict(), "cached_only": cached_only,
            "engine": getattr(client.backend, "engine", ""), "threads": getattr(client.backend, "threads", None),
            "load_s": load_s, "fresh_calls": fresh, "wall_s": wall,
            "seconds_per_judgment": wall / fresh if fresh else None,
            "stored_seconds_per_judgment": sum(stored) / len(stored) if stored else None,
            "load_average": [load_before, os.getloadavg()[0]],
            "n_failed": judged.n_failed, "scored_pairs": [list(p) for p in pairs],
            **agreement(pairs, nist, labels, expected=expected)}, per_pair


def card_of(key: str, measured: dict, per_pair: dict, *, dataset: str, sample: dict, sample_pairs, nist,
            reference_labels: dict) -> dict:
    """The model card of ``key``'s run (see pipeline.llm.model_cards)."""
    from datetime import datetime, timezone
    from importlib.metadata import version

    model = per_pair["model"]
    scored = [tuple(p) for p in per_pair["pairs"]]
    references = {name: {(q, p): labels[q][p] for q, p in scored if p in labels.get(q, {})}
                  for name, labels in reference_labels.items()}
    identity = {"key": model.key, "name": model.name, "sha256": model.sha256, "quantisation": model.quantisation,
                "parameters": model.parameters, "engine": f"llama.cpp (xllamacpp {version('xllamacpp')})"}
    facts = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **git_state(),
             "command": " ".join(["python", *sys.argv]), "cached_only": measured["cached_only"],
             "threads": measured["threads"], "load_average": measured["load_average"],
             "seconds_per_judgment": measured["stored_seconds_per_judgment"],
             "seconds_per_judgment_note": "the engine's wall seconds per judgment as the response cache recorded "
                                          "them (a batch's time shared by its requests), on a shared machine"}
    return model_card(identity, dataset=dataset, sample=sample, sample_pairs=sample_pairs,
                      rows=card_pairs(scored, per_pair["labels"], per_pair["expected"], references), nist=nist,
                      judge=judge_definition(per_pair["options"]), measured=facts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-grade", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dataset", default="dl19")
    parser.add_argument("--data", default=None)
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--cached-only", action="store_true",
                        help="score only the pairs whose judgments are in the response cache (no model call)")
    parser.add_argument("--h2j-cap", type=int, default=None, metavar="N",
                        help="instead of the stratified sample: exactly the pairs `python -m pipeline h2j --cap N` "
                             "judges (the judge's agreement on the pairs its H2J set rests on; with --cached-only, "
                             "those an interrupted H2J run reached)")
    parser.add_argument("--out", default=None, help="result file (default: cache/bench/judge_agreement.json, "
                                                    "which the Failure overlap page reads)")
    parser.add_argument("--card-dir", default=None, help="where the model cards go (default: "
                                                         "pipeline/llm/model_cards, what the pipeline shows)")
    parser.add_argument("--no-card", action="store_true", help="write no model card")
    parser.add_argument("--shard", default=None, metavar="K/N",
                        help="only answer every N-th pair from the K-th, N prime to 4 so that every shard holds every grade (fills the response cache in "
                             "parallel processes; a run without --shard then scores every pair)")
    args = parser.parse_args()

    from pipeline.data.datasets import load_dataset
    from pipeline.data.imported import folder_judgments

    data = load_dataset(args.dataset, args.data)
    qrels = data.require_qrels()
    if args.h2j_cap is None:
        pairs = stratified_sample(qrels, data.passages.__contains__, args.per_grade, args.seed)
        sample = {"per_grade": args.per_grade, "seed": args.seed, "n_pairs": len(pairs),
                  "rule": "judged pairs with passage text, per NIST grade 0-3 a seeded permutation's first per_grade"}
    else:
        queries = data.queries()
        drawn = sample_pairs({q: qrels[q] for q in queries}, args.h2j_cap, eligible=data.passages.__contains__)
        pairs = [(q, p) for q, pids in drawn.items() for p in pids]
        sample = {"h2j_cap": args.h2j_cap, "seed": 0, "n_pairs": len(pairs),
                  "rule": "the pairs `python -m pipeline h2j --cap N` judges: per query at most N judged pairs "
                          "with passage text, allocated across grades in proportion "
                          "(pipeline.judging.judgments.sample_pairs)"}
    if args.shard:
        k, n = map(int, args.shard.split("/"))
        for key in [m for m in args.models.split(",") if m]:
            judge_model(key, data, pairs[k::n])
        return
    nist = {(q, p): qrels[q][p] for q, p in pairs}
    path = Path(args.out) if args.out else result_path()
    previous = json.loads(path.read_text()) if path.is_file() else {}
    result = {"dataset": data.name, "sample": sample,
              "judge": "UMBRELA graded prompt (umbrela 0.0.7 qrel_fewshot_bing.txt, zero-shot), binary = grade >= 2; "
                       "logprob: expected grade over digits 0-3, binary at >= 1.5",
              "cpu": {"cores": len(os.sched_getaffinity(0))}, "references": {}, "models": {}}
    if previous.get("sample") == result["sample"]:
        result["models"] = previous.get("models", {})  # keep models measured in an earlier run
    files = folder_judgments(data.folder, data.name)
    reference_labels = {name: read_judgments_file(files[name]) for name in REFERENCES if name in files}

    def score_references(on):
        return {name: agreement(on, nist, {p: labels[p[0]][p[1]] for p in on if p[1] in labels.get(p[0], {})})
                for name, labels in reference_labels.items()}

    result["references"] = score_references(pairs)
    def save(key):
        # several benchmark processes (one per model) may share the file: merge into what is there now
        now = json.loads(path.read_text()) if path.is_file() else {}
        if now.get("sample") == result["sample"]:
            result["models"] = {**now.get("models", {}), key: result["models"][key]}
        atomic_write_text(path, json.dumps(result, indent=1))

    for key in [m for m in args.models.split(",") if m]:
        try:
            result["models"][key], per_pair = judge_model(key, data, pairs, cached_only=args.cached_only)
            if args.cached_only:  # the imported judges on exactly the pairs this model was scored on
                scored = [tuple(p) for p in result["models"][key]["scored_pairs"]]
                result["models"][key]["references_on_same_pairs"] = score_references(scored)
        except Exception as exc:  # a model whose packages are absent: say so, measure the others
            result["models"][key] = {"error": f"{type(exc).__name__}: {exc}"}
            per_pair = None
        save(key)
        if per_pair and per_pair["pairs"] and args.h2j_cap is None and not args.no_card:
            card = card_of(key, result["models"][key], per_pair, dataset=data.name, sample=sample,
                           sample_pairs=pairs, nist=nist, reference_labels=reference_labels)
            print(f"model card: {write_card(card, args.card_dir)} ({len(card['pairs'])} pairs)")
    print(f"{data.name}: {len(pairs)} pairs ({sample['rule']}); written to {path}")
    print(f"{'judge':34s} {'parse':>6s} {'agree':>6s} {'kappa':>6s} {'exact':>6s} {'+-1':>6s} {'s/judg':>7s}")
    rows = [(f"imported:{k}", v) for k, v in result["references"].items()]
    for key, v in result["models"].items():
        rows.append((v.get("model", key), v))
        if "logprob" in v:
            rows.append((f"  {key} expected grade", {**v["logprob"], "parse_rate": None}))
    for name, v in rows:
        if "error" in v:
            print(f"{name:34s} {v['error']}")
            continue
        cells = [v.get(k) for k in ("parse_rate", "binary_agreement", "kappa", "graded_exact", "graded_within_1",
                                    "stored_seconds_per_judgment")]
        print(f"{name:34s} " + " ".join(f"{c:6.2f}" if isinstance(c, float) else f"{'-':>6s}" for c in cells)
              + ("  (kappa " + kappa_text(None) + ")" if "kappa" in v and v["kappa"] is None else ""))


if __name__ == "__main__":
    main()
