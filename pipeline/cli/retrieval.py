"""``eval-run``, ``retrieve``, ``h2r``: a run's per-query effectiveness, a computed run, the H2R sets."""
from __future__ import annotations

from core import cli
from pipeline.data.datasets import DATASETS
from pipeline.sets.rule import SetSummary  # a hard set's size, threshold and tie block in one line


def cmd_eval_run(args) -> None:
    from pipeline.retrieval.evaluation import evaluate_run_file

    result = evaluate_run_file(args.qrels, args.run, args.measure, complete=args.complete,
                               allow_partial=args.allow_partial)
    if args.json:
        cli.print_json(result)
        return
    for qid, value in result["per_query"].items():
        print(f"{args.measure}\t{qid}\t{value:.4f}")
    print(f"{args.measure}\tall\t{result['mean']:.4f}")


def _compute_options(args) -> dict:
    return {"depth": args.depth, "k1": args.k1, "b": args.b, "threads": args.threads}


def cmd_retrieve(args) -> None:
    from pipeline.data.datasets import load_dataset
    from pipeline.retrieval.retrievers import compute_run, run_summary

    data = load_dataset(args.dataset, args.data)
    result = compute_run(data, args.retriever, **_compute_options(args))
    summary = run_summary(data, result)
    if args.json:
        cli.print_json({**result.as_dict(), **summary})
        return
    print(f"{result.name} on {data.name}: {result.provenance}")
    print(f"  queries: {summary['n_queries']} ({summary['n_queries_with_hits']} with at least one hit), "
          f"depth {summary['depth']}")
    if summary["mean_nDCG@10"] is not None:
        print(f"  mean nDCG@10: {summary['mean_nDCG@10']:.4f} over {summary['n_judged_queries']} judged queries "
              f"(partial corpus: not comparable with full-corpus runs)")
    else:
        print(f"  mean nDCG@10: no qrels for {data.name}")
    print(f"  run: {result.path}")


def cmd_h2r(args) -> None:
    from pipeline.data.datasets import load_dataset
    from pipeline.retrieval.h2r import h2r_report
    from pipeline.retrieval.retrievers import get_run
    from pipeline.study.components import parse_component

    data = load_dataset(args.dataset, args.data)
    data.require_qrels()
    runs = [get_run(data, name, file, **_compute_options(args))
            for name, file in (parse_component(text, "--retriever") for text in args.retriever)]
    report = h2r_report(data, runs, quantile=args.quantile, measure=args.measure)
    if args.json:
        cli.print_json(report)
        return
    print(f"{data.name}: {data.coverage.summary()}")
    print(f"H2R rule: {report['rule']}, q = {args.quantile}")
    for name, r in report["retrievers"].items():
        print(f"{name}: {r['provenance']}")
        hard_mean = "n/a" if r["hard_mean"] is None else f"{r['hard_mean']:.4f}"
        rule = SetSummary.from_dict(r["hard_set"])
        print(f"  mean {args.measure} {r['mean']:.4f} over {r['n_queries']} queries; H2R: {rule.line()}, "
              f"mean {hard_mean}: {' '.join(r['hard'])}")
        if rule.warning:
            print(f"  warning: {rule.warning}")
    print(f"hard under all ({len(report['intersection'])}): {' '.join(report['intersection'])}")


def _compute_args(p) -> None:
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--depth", type=cli.positive_int, default=1000, help="passages retrieved per query (computed runs)")
    p.add_argument("--k1", type=cli.nonnegative_float, default=0.9, help="BM25 k1 (computed runs)")
    p.add_argument("--b", type=cli.number(float, 0, 1, what="a number between 0 and 1"), default=0.4,
                   help="BM25 b (computed runs)")
    p.add_argument("--threads", type=cli.positive_int, default=2, help="search threads (computed runs)")
    cli.json_arg(p)


def _eval_run_arguments(p) -> None:
    p.add_argument("--qrels", required=True, type=cli.existing_file)
    p.add_argument("--run", required=True, type=cli.existing_file)
    p.add_argument("--measure", default="nDCG@10", help="ir_measures name")
    p.add_argument("--complete", action="store_true", help="judged queries missing from the run score 0 (trec_eval -c)")
    p.add_argument("--allow-partial", action="store_true", help="score a run that covers under half the judged queries")
    cli.json_arg(p)


def _retrieve_arguments(p) -> None:
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--retriever", required=True, choices=["bm25", "dense", "tasb", "minilm"])
    _compute_args(p)


def _h2r_arguments(p) -> None:
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--retriever", required=True, action="append", type=cli.named_file, metavar="NAME[=RUNFILE]",
                   help="repeatable; NAME: the data folder's imported full-corpus run runs/run.NAME.<dataset>.txt "
                        "(for bm25/dense/tasb/minilm without one: computed here, reported as NAME@computed); "
                        "NAME@computed: the run computed here over the folder's passages (partial corpus); "
                        "NAME=RUNFILE: that file")
    p.add_argument("--quantile", type=cli.quantile, default=0.25, help="the hard set is the bottom q of the queries")
    p.add_argument("--measure", default="nDCG@10")
    _compute_args(p)


COMMANDS = (
    cli.Command("eval-run", "per-query effectiveness of a TREC run (ir_measures)", _eval_run_arguments, cmd_eval_run),
    cli.Command("retrieve", "compute a BM25 or dense run over the data folder's passages",
                _retrieve_arguments, cmd_retrieve),
    cli.Command("h2r", "hard-to-retrieve query sets and their intersection", _h2r_arguments, cmd_h2r),
)
