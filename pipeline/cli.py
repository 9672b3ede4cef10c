"""``python -m pipeline``: the failure study's command line (every analysis scriptable, ``--json``).

Commands::

    eval-run --qrels FILE --run FILE [--measure nDCG@10] [--complete] [--json]
        per-query values and their mean ({"per_query": {qid: value}, "mean": value})
    retrieve --dataset dl19 --retriever bm25|dense|tasb|minilm [--data DIR]
        compute a run over the data folder's passages, write it under cache/, print its path
    h2r --dataset dl19 --retriever NAME[=RUNFILE] ... [--quantile 0.25] [--json]
        hard-to-retrieve sets per retriever, their mean NDCG@10 and their intersection
    coverage --dataset dl19|...|all [--json]
        judged queries and how many judged / relevant passages have text

Errors print one line on stderr and exit with status 1.
"""
from __future__ import annotations

import argparse
import json
import sys

from pipeline.datasets import DATASETS


def _dump(obj) -> None:
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


def cmd_eval_run(args) -> None:
    from pipeline import evaluation, trec_io

    qrels = trec_io.read_qrels(args.qrels)
    run = trec_io.read_run(args.run)
    if not args.allow_partial:
        evaluation.check_run_matches_qrels(qrels, run, args.run, args.qrels)
    values = evaluation.per_query(qrels, run, args.measure, complete=args.complete)
    mean = evaluation.mean(values)
    if args.json:
        _dump({"per_query": values, "mean": mean})
        return
    for qid, value in values.items():
        print(f"{args.measure}\t{qid}\t{value:.4f}")
    print(f"{args.measure}\tall\t{mean:.4f}")


def _compute_options(args) -> dict:
    return {"depth": args.depth, "k1": args.k1, "b": args.b, "threads": args.threads}


def cmd_retrieve(args) -> None:
    from pipeline.datasets import load_dataset
    from pipeline.retrievers import compute_run

    data = load_dataset(args.dataset, args.data)
    result = compute_run(data, args.retriever, **_compute_options(args))
    if args.json:
        _dump(result.as_dict())
    else:
        print(result.path)


def cmd_h2r(args) -> None:
    from pipeline.datasets import load_dataset
    from pipeline.h2r import h2r_report
    from pipeline.retrievers import get_run, parse_retriever_arg

    data = load_dataset(args.dataset, args.data)
    data.require_qrels()
    runs = [get_run(data, name, file, **_compute_options(args))
            for name, file in map(parse_retriever_arg, args.retriever)]
    report = h2r_report(data, runs, quantile=args.quantile, measure=args.measure)
    if args.json:
        _dump(report)
        return
    print(f"{data.name}: {data.coverage.summary()}")
    print(f"H2R rule: {report['rule']}, q = {args.quantile}")
    for name, r in report["retrievers"].items():
        print(f"{name}: {r['provenance']}")
        print(f"  mean {args.measure} {r['mean']:.4f} over {r['n_queries']} queries; H2R: {r['n_hard']} queries "
              f"(threshold {r['threshold']:.4f}), mean {r['hard_mean']:.4f}: {' '.join(r['hard'])}")
    print(f"hard under all ({len(report['intersection'])}): {' '.join(report['intersection'])}")


def cmd_coverage(args) -> None:
    from pipeline.datasets import load_dataset

    names = list(DATASETS) if args.dataset == "all" else [args.dataset]
    out = {}
    for name in names:
        data = load_dataset(name, args.data)
        out[name] = {"source": data.source, "has_qrels": data.has_qrels, "qrels_note": data.qrels_note,
                     "imported_runs": {k: str(v) for k, v in data.imported_runs().items()},
                     **data.coverage.as_dict()}
        if not args.json:
            print(f"{name}: {data.coverage.summary()}" + (f" [{data.qrels_note}]" if data.qrels_note else ""))
    if args.json:
        _dump(out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval-run", help="per-query effectiveness of a TREC run (ir_measures)")
    p.add_argument("--qrels", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--measure", default="nDCG@10", help="ir_measures name (default nDCG@10)")
    p.add_argument("--complete", action="store_true", help="judged queries missing from the run score 0 (trec_eval -c)")
    p.add_argument("--allow-partial", action="store_true", help="score a run that covers under half the judged queries")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval_run)

    def data_args(p):
        p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
        p.add_argument("--depth", type=int, default=1000, help="passages retrieved per query (computed runs)")
        p.add_argument("--k1", type=float, default=0.9)
        p.add_argument("--b", type=float, default=0.4)
        p.add_argument("--threads", type=int, default=2)
        p.add_argument("--json", action="store_true")

    p = sub.add_parser("retrieve", help="compute a BM25 or dense run over the data folder's passages")
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--retriever", required=True, choices=["bm25", "dense", "tasb", "minilm"])
    data_args(p)
    p.set_defaults(func=cmd_retrieve)

    p = sub.add_parser("h2r", help="hard-to-retrieve query sets and their intersection")
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--retriever", required=True, action="append", metavar="NAME[=RUNFILE]",
                   help="repeatable; NAME alone: the data folder's imported run if any, else computed here")
    p.add_argument("--quantile", type=float, default=0.25)
    p.add_argument("--measure", default="nDCG@10")
    data_args(p)
    p.set_defaults(func=cmd_h2r)

    p = sub.add_parser("coverage", help="judged queries and passage-text coverage")
    p.add_argument("--dataset", default="all", choices=[*DATASETS, "all"])
    p.add_argument("--data", default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_coverage)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (ValueError, RuntimeError, OSError) as exc:
        # TrecFormatError/DatasetError are ValueErrors, RetrievalError/JavaError RuntimeErrors
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 1
    return 0
