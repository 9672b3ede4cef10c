"""Hard-set sizes on the real TREC DL data, before and after the tie rule of ``pipeline.sets.rule`` (issue 18).

    python bench/hard_set_sizes.py [--data DIR] [--caps none,4,20] [--generator SPEC] [--markdown]

For DL19 and DL20: H2R of the imported BM25 and TAS-B runs (nDCG@10, judged queries missing from a
run score 0), and H2J of the imported Llama-3.3-70B and FLAN-T5 judgments, binary and graded, with
every pair (no cap) and with the pairs an LLM judge capped at N per query would label
(``pipeline.judging.judgments.sample_pairs`` over the pairs whose passage has text, as ``llm_judgments`` draws
them; the imported labels of exactly those pairs). Each set is computed over the queries its task
scores, at q = 0.25.

With ``--generator SPEC`` (an LLM spec, e.g. ``embedded``: the 135M model, which exercises the
rule and is no finding), H2G rows too: BERTScore F1 (MiniLM) of its zero-shot answers, with queries
whose reference set is incomplete excluded (the default) and included.

"before" is the earlier rule (value <= numpy.quantile(v, q), ties at the threshold all included;
reproduced here in two lines); "after" is ``pipeline.sets.rule.hard_set``. Printed per row: N, the
threshold, the tie block at the target (value x size, in or out), |set| before and after, and the
target floor((N-1)q)+1.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.retrieval import evaluation  # noqa: E402
from pipeline.data.datasets import load_dataset  # noqa: E402
from pipeline.data.imported import folder_judgments  # noqa: E402
from pipeline.sets.rule import hard_set  # noqa: E402
from pipeline.judging.judgments import Judgments, import_judgments, sample_pairs  # noqa: E402
from pipeline.judging.h2j import disagreement  # noqa: E402

QUANTILE = 0.25


def before_size(values: dict[str, float], top: bool) -> int:
    v = np.fromiter(values.values(), float)
    return int((v >= np.quantile(v, 1 - QUANTILE)).sum() if top else (v <= np.quantile(v, QUANTILE)).sum())


def capped(judgments: Judgments, data, cap: int | None) -> Judgments:
    if cap is None:
        return judgments
    qrels = data.require_qrels()
    sample = sample_pairs({q: qrels[q] for q in data.queries()}, cap, eligible=data.passages.__contains__)
    labels = {q: {p: judgments.labels[q][p] for p in pids if p in judgments.labels.get(q, {})}
              for q, pids in sample.items()}
    return Judgments(judgments.judge, judgments.setup, judgments.provenance, labels, judgments.labels_binary, cap=cap)


def row(dataset, task, component, setup, cap, values, top):
    h = hard_set(values, QUANTILE, task, top=top)
    return {"dataset": dataset, "task": task, "component": component, "setup": setup,
            "cap": "none" if cap is None else cap, "N": h.n_queries, "threshold": h.threshold,
            "target": h.n_target, "before": before_size(values, top), "after": len(h.qids),
            "tie": f"{h.tie_value:.4g} x {h.tie_block}" + ("" if not h.ties_decide else
                                                           (" in" if h.tie_included else " out")),
            "ties_decide": h.ties_decide}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_dl"))
    parser.add_argument("--caps", default="none,4,20")
    parser.add_argument("--datasets", default="dl19,dl20")
    parser.add_argument("--generator", default=None, help="also H2G with this LLM spec's answers (e.g. embedded)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    caps = [None if c == "none" else int(c) for c in args.caps.split(",")]
    rows = []
    for name in args.datasets.split(","):
        data = load_dataset(name, args.data)
        qrels = data.require_qrels()
        for retriever, path in sorted(data.imported_runs().items()):
            values = evaluation.per_query(qrels, data.load_run(path), "nDCG@10", complete=True)
            rows.append(row(name, "h2r", retriever, "", None, values, top=False))
        for judge, path in folder_judgments(data.folder, name).items():
            for setup in ("binary", "graded"):
                full = import_judgments(judge, path, setup, known_qids=data.topics)
                for cap in caps:
                    values, _ = disagreement(capped(full, data, cap), qrels, data.queries())
                    rows.append(row(name, "h2j", judge, setup, cap, values, top=True))
        if args.generator:
            from pipeline.study.tasks.h2g import generation_for
            from pipeline.generation.h2g import generation_values

            # both choices below are scored: the partial-reference queries are answered too
            gen = generation_for(data, args.generator, progress=False, partial_references="include")
            label = gen.provenance.get("label", args.generator)
            for choice in ("exclude", "include"):
                values, _ = generation_values(data, gen, "minilm", "max", choice)
                rows.append(row(name, "h2g", label, f"partial refs {choice}", None, values, top=False))
    cols = ["dataset", "task", "component", "setup", "cap", "N", "threshold", "target", "before", "after", "tie"]
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    for r in rows:
        cells = [f"{r[c]:.4f}" if c == "threshold" else str(r[c]) for c in cols]
        print(("| " + " | ".join(cells) + " |") if args.markdown else "\t".join(cells))


if __name__ == "__main__":
    main()
