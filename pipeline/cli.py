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
    h2j (--dataset dlYY | --qrels FILE [--topics F] [--passages F]) --judge NAME[=FILE] [--setup binary|graded]
        [--quantile 0.25] [--cap N] [--json]
        per-query judge/NIST disagreement and the H2J set, under "binary" and "graded"
    h2g (--dataset dlYY | --qrels ...) --generator NAME[=FILE.jsonl] [--encoder auto|roberta-large|minilm]
        [--aggregate max|mean] [--json]
        per-query BERTScore F1 against the grade-2/3 passages and the H2G set, per generator
    overlap (--dataset dlYY | --qrels ...) --retriever NAME[=RUNFILE] --generator NAME[=FILE.jsonl]
        --judge NAME[=FILE] --setup binary|graded [--quantile 0.25] [--json]
        the three sets (h2r, h2g, h2j), Venn regions, shares and pairwise figures of one configuration
    run --dataset dlYY [--retriever ...]... [--generator ...]... [--judge ...]... [--setup ...]... [--cap N]
        every step (H2R, answers, BERTScore, judgments, every configuration's overlap, stability), with
        progress bars; resumable (LLM calls and BERTScore pairs are cached); writes
        cache/failure/<dataset>/study.json (and --out FILE)

A generator or judge NAME without a file is an LLM spec: embedded, auto, ollama:MODEL[@HOST],
openai:MODEL@BASE_URL (see pipeline.llm.factory); a judge NAME that matches the data folder's
judgments/judgments.NAME.<dataset>.txt imports that file.

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


def _collection(args):
    from pipeline.failure import load_collection

    return load_collection(args.dataset, qrels=args.qrels, topics=args.topics, passages=args.passages,
                           data_dir=args.data)


def _llm_options(args) -> dict:
    return {"timeout": args.llm_timeout, "retries": args.llm_retries, "executor": args.executor,
            "address": args.address}


def cmd_h2j(args) -> None:
    from pipeline.failure import judgment_values, judgments_for, task_set

    data = _collection(args)
    out = {"dataset": data.name, "quantile": args.quantile}
    for setup in args.setup or ["binary", "graded"]:
        judgments = judgments_for(data, args.judge, setup, cap=args.cap, llm_options=_llm_options(args),
                                  progress=not args.json)
        values, info = judgment_values(data, judgments)
        out[setup] = {"judge": judgments.judge, "per_query": values, "h2j": task_set(values, "h2j", args.quantile),
                      **info}
    if args.json:
        _dump(out)
        return
    for setup in args.setup or ["binary", "graded"]:
        r = out[setup]
        print(f"{data.name} {setup} ({r['judge']}): {r['n_queries']} queries, {r['n_pairs_compared']} pairs, "
              f"{r['n_unparseable']} unparseable; H2J ({len(r['h2j'])}): {' '.join(r['h2j'])}")


def cmd_h2g(args) -> None:
    from pipeline.failure import generation_for, generation_values, task_set

    data = _collection(args)
    out = {"dataset": data.name, "quantile": args.quantile, "generators": {}}
    for arg in args.generator:
        gen = generation_for(data, arg, llm_options=_llm_options(args), progress=not args.json)
        values, info = generation_values(data, gen, args.encoder, args.aggregate)
        out["generators"][gen.name] = {"provenance": gen.provenance, "per_query": values,
                                       "h2g": task_set(values, "h2g", args.quantile), **info}
    if args.json:
        _dump(out)
        return
    for name, r in out["generators"].items():
        print(f"{data.name} {name} ({r['encoder']}): {len(r['per_query'])} queries, {r['n_excluded']} excluded; "
              f"H2G ({len(r['h2g'])}): {' '.join(r['h2g'])}")


def cmd_overlap(args) -> None:
    from pipeline.failure import failure_sets

    result = failure_sets(args.dataset, retriever=args.retriever, generator=args.generator, judge=args.judge,
                          setup=args.setup, quantile=args.quantile, data_dir=args.data, qrels=args.qrels,
                          topics=args.topics, passages=args.passages, encoder=args.encoder, cap=args.cap,
                          llm_options=_llm_options(args), progress=not args.json)
    out = result.as_dict()
    if args.json:
        _dump(out)
        return
    print(f"{out['dataset']} {out['configuration']}: {out['n_queries']} queries")
    for task in ("h2r", "h2g", "h2j"):
        print(f"  {task} ({len(out[task])}): {' '.join(out[task])}")
    print(f"  all three: {out['all_three']['count']} ({out['all_three']['share']:.1%})")
    for pair, fig in out["pairwise"].items():
        print(f"  {pair}: {fig['count']} (expected {fig['expected_if_independent']:.2f}, p = {fig['p_value']:.3g}, "
              f"Jaccard {fig['jaccard']:.2f})")


def cmd_run(args) -> None:
    from pipeline.failure import run_study

    data = _collection(args)
    retrievers = args.retriever or (sorted(data.imported_runs()) or ["bm25"])
    judges = args.judge
    if not judges:
        found = sorted(p.name.split(".")[1] for p in (data.folder / "judgments").glob(f"judgments.*.{data.name}.txt")) \
            if data.folder is not None and (data.folder / "judgments").is_dir() else []
        judges = found + ["auto"]
    study = run_study(data, retrievers=retrievers, generators=args.generator or ["auto"], judges=judges,
                      setups=args.setup or ["binary", "graded"], quantile=args.quantile, encoder=args.encoder,
                      aggregate=args.aggregate, cap=args.cap, llm_options=_llm_options(args),
                      log=(lambda m: print(m, file=sys.stderr)))
    if args.out:
        from core.atomic import atomic_write_text
        atomic_write_text(args.out, json.dumps(study, ensure_ascii=False, indent=1))
    if args.json:
        _dump(study)
        return
    for label, c in study["configurations"].items():
        a = c["analysis"]
        largest = a["largest_pairwise"]
        print(f"{label}: all three {a['all_three']['share']:.1%}; exclusive "
              + ", ".join(f"{t} {e['share']:.0%}" for t, e in a["exclusive"].items() if e["share"] is not None)
              + f"; largest pair {largest['pair']} ({largest['count']}, p = {largest['p_value']:.3g})"
              + (f"  [{c['note']}]" if c["note"] else ""))


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

    def collection_args(p, dataset_required=False):
        p.add_argument("--dataset", choices=list(DATASETS), required=dataset_required)
        p.add_argument("--qrels", default=None, help="any TREC-style qrels file instead of --dataset")
        p.add_argument("--topics", default=None, help="qid<TAB>query file (with --qrels)")
        p.add_argument("--passages", default=None, help="pid<TAB>text file (with --qrels)")
        p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
        p.add_argument("--quantile", type=float, default=0.25)
        p.add_argument("--cap", type=int, default=20, help="LLM judge: judged pairs per query at most (stratified)")
        p.add_argument("--encoder", default="auto", choices=["auto", "roberta-large", "minilm"])
        p.add_argument("--aggregate", default="max", choices=["max", "mean"], help="BERTScore over several passages")
        p.add_argument("--llm-timeout", type=float, default=300.0, help="seconds per LLM call")
        p.add_argument("--llm-retries", type=int, default=2)
        p.add_argument("--executor", choices=["local", "ray"], default="local",
                       help="ray: fan the LLM calls out over Ray tasks, every call through the response cache")
        p.add_argument("--address", default=None,
                       help="Ray cluster for --executor ray: auto, host:port, ray://host:10001 (default: [ray] "
                            "address, else a local Ray instance)")
        p.add_argument("--json", action="store_true")

    p = sub.add_parser("h2j", help="hard-to-judge sets: judge/NIST disagreement per query (binary and graded)")
    collection_args(p)
    p.add_argument("--judge", required=True, metavar="NAME[=FILE]")
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="default: both")
    p.set_defaults(func=cmd_h2j)

    p = sub.add_parser("h2g", help="hard-to-generate sets: BERTScore F1 of zero-shot answers per query")
    collection_args(p)
    p.add_argument("--generator", required=True, action="append", metavar="NAME[=FILE.jsonl]")
    p.set_defaults(func=cmd_h2g)

    p = sub.add_parser("overlap", help="the three failure sets of one configuration and their overlap")
    collection_args(p)
    p.add_argument("--retriever", required=True, metavar="NAME[=RUNFILE]")
    p.add_argument("--generator", required=True, metavar="NAME[=FILE.jsonl]")
    p.add_argument("--judge", required=True, metavar="NAME[=FILE]")
    p.add_argument("--setup", required=True, choices=["binary", "graded"])
    p.set_defaults(func=cmd_overlap)

    p = sub.add_parser("run", help="every failure-study step and every configuration's overlap (resumable)")
    collection_args(p)
    p.add_argument("--retriever", action="append", metavar="NAME[=RUNFILE]", help="default: the imported runs")
    p.add_argument("--generator", action="append", metavar="NAME[=FILE.jsonl]", help="default: auto")
    p.add_argument("--judge", action="append", metavar="NAME[=FILE]",
                   help="default: the data folder's judgment files and the auto LLM judge")
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="default: both")
    p.add_argument("--out", default=None, help="also write the study JSON here")
    p.set_defaults(func=cmd_run)

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
