"""``python -m pipeline``: the failure study's command line (every analysis scriptable, ``--json``).

Commands::

    eval-run --qrels FILE --run FILE [--measure nDCG@10] [--complete] [--json]
        per-query values and their mean ({"per_query": {qid: value}, "mean": value})
    retrieve --dataset dl19 --retriever bm25|dense|tasb|minilm [--data DIR] [--json]
        compute a run over the data folder's passages (named NAME@computed), write it under cache/,
        print queries, depth, mean nDCG@10 (when qrels exist) and its path
    h2r --dataset dl19 --retriever NAME[=RUNFILE] ... [--quantile 0.25] [--json]
        hard-to-retrieve sets per retriever, their mean NDCG@10 and their intersection. NAME is the
        data folder's imported full-corpus run; NAME@computed the run computed here (partial corpus);
        a computable NAME without an imported run is computed and reported as NAME@computed
    coverage --dataset dl19|...|all [--json]
        judged queries and how many judged / relevant passages have text
    typology --dataset dl19 --task h2r|h2g|h2j [--retriever|--generator|--judge/--setup ...] [--llm SPEC]
             [--max-rounds N] [--batch-size N] [--max-queries N] [--typology study|FILE.json] [--json]
        induce a failure typology for the task's hard queries (or import one) and assign reasons;
        resumable (response cache + typology store), progress bars on stderr
    annotations --import FILE.csv | --export FILE.csv | --report [--json] | --create-sample ...
        human validation of the assigned reasons: merge/export CSV rows, the validation figures
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
    prefer --dataset dlYY [--reasons FILE] [--generator SPEC] [--judge-model SPEC] [--json] ...
        difficulty-aware vs baseline answers judged pairwise in both orders: counts, preference rate,
        Wilson 95% interval, sign-test p per dataset, task and category (resumable via the response cache)

A generator or judge NAME without a file is an LLM spec: embedded, auto, ollama:MODEL[@HOST],
openai:MODEL@BASE_URL (see pipeline.llm.factory); a judge NAME that matches the data folder's
judgments/judgments.NAME.<dataset>.txt imports that file.

Errors print one line on stderr and exit with status 1.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from pipeline import difficulty  # light: its shipped data files are the prefer command's defaults
from pipeline.datasets import DATASETS
from pipeline.generation import GENERATION_OPTIONS


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

    from pipeline import evaluation

    data = load_dataset(args.dataset, args.data)
    result = compute_run(data, args.retriever, **_compute_options(args))
    summary = {"n_queries": len(result.run), "n_queries_with_hits": sum(1 for r in result.run.values() if r),
               "depth": result.details["settings"]["depth"], "mean_nDCG@10": None, "n_judged_queries": 0}
    if data.has_qrels:
        values = evaluation.per_query(data.qrels, result.run, "nDCG@10", complete=True)
        summary.update({"mean_nDCG@10": evaluation.mean(values), "n_judged_queries": len(values)})
    if args.json:
        _dump({**result.as_dict(), **summary})
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


def cmd_typology(args) -> None:
    from tqdm import tqdm

    from pipeline.llm import make_client
    from pipeline.typology.categories import resolve_typology
    from pipeline.typology.induction import InductionConfig
    from pipeline.typology.runner import run_typology
    from pipeline.typology.sources import HardSetConfig, hard_queries
    from pipeline.typology.store import TypologyStore

    hard_config = HardSetConfig(dataset=args.dataset, task=args.task, retriever=args.retriever,
                                generator=args.generator, judge=args.judge, setup=args.setup,
                                quantile=args.quantile, data=args.data, qrels=args.qrels, topics=args.topics,
                                passages=args.passages, cap=args.cap, encoder=args.encoder,
                                aggregate=args.aggregate, max_queries=args.max_queries)
    config = InductionConfig(batch_size=args.batch_size, max_rounds=args.max_rounds,
                             max_categories=args.max_categories, seed=args.seed)
    dataset, queries, hard_set = hard_queries(hard_config, llm_options=_llm_options(args))
    imported = resolve_typology(args.typology, args.task) if args.typology else None
    client = make_client(args.llm, **_llm_options(args))
    bar = tqdm(total=config.max_rounds, desc=f"{dataset} {args.task}: rounds", unit="round",
               disable=bool(imported), file=sys.stderr)

    def on_round(rnd) -> None:
        bar.update(1)
        bar.set_postfix_str(f"{len(rnd.categories)} categories, {rnd.status}"
                            + (", unchanged" if rnd.unchanged else ""))

    with TypologyStore() as store:
        result = run_typology(client, store, dataset=dataset, task=args.task, queries=queries,
                              hard_set=hard_set, config=config, imported=imported, force=args.force,
                              on_round=on_round)
    bar.close()
    if args.json:
        _dump(result)
        return
    print(f"{result['run_id']}: {result['typology']} -- {result['model']['label']}")
    print(f"{result['n_queries']} hard queries ({hard_set['n_hard']} in the set); "
          f"{result['n_rounds']} round(s), stop: {result['stop_reason'] or 'imported'}")
    for cat in result["categories"]:
        print(f"  {cat['n_queries']:3d}  {cat['name']}: {cat['description']}")
    print(f"unparseable assignments: {result['n_unparseable']}, failed calls: {result['n_failed']}")


def cmd_annotations(args) -> None:
    from pipeline.annotations import AnnotationStore
    from pipeline.validation import report

    with AnnotationStore() as store:
        if args.create_sample:
            from pipeline.typology_view import sample_items
            from pipeline.typology.store import TypologyStore

            with TypologyStore() as typology:
                items = sample_items(typology, args.run)
            keys = store.create_sample(items, name=args.sample, size=args.size, seed=args.seed,
                                       per_annotator=args.per_annotator)
            print(f"sample {args.sample!r}: {len(keys)} of {len(items)} items", file=sys.stderr)
        if args.import_csv:
            n = store.import_csv(args.import_csv)
            print(f"imported {n} rows from {args.import_csv}", file=sys.stderr)
        if args.export_csv:
            store.export_csv(args.export_csv)
            print(f"exported {len(store.export_rows())} rows to {args.export_csv}", file=sys.stderr)
        if args.report:
            figures = report(store.export_rows())
            if args.json:
                _dump(figures)
            else:
                for line in _report_lines(figures):
                    print(line)


def _fmt(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _report_lines(figures: dict):
    yield f"{figures['n_rows']} decisions from {len(figures['annotators'])} annotator(s)"
    for answer, n in figures["excluded"].items():
        if n["queries"]:
            yield f"excluded: {n['queries']} queries ({n['decisions']} decisions) with an {answer} assignment"
    for model, by_model in figures["by_model"].items():
        yield f"reasons assigned by {model or '(model not recorded)'} (typology runs: {', '.join(by_model['runs'])})"
        for who, fig in [*by_model["llm_vs_annotator"].items(), ("union", by_model["llm_vs_union"])]:
            o = fig["overall"]
            yield (f"  LLM vs {who}: cell accuracy {_fmt(o['cell_accuracy'])}, precision {_fmt(o['precision'])}, "
                   f"recall {_fmt(o['recall'])}, exact agreement {_fmt(o['exact_agreement'])} "
                   f"({o['n_decisions']} decisions, {o['n_queries']} queries; TP {o['tp']} FP {o['fp']} "
                   f"FN/added {o['fn']} TN {o['tn']})")
    for pair, fig in figures["kappa"].items():
        o = fig["overall"]
        yield (f"kappa {pair}: {_fmt(o['kappa'])} ({o['n_decisions']} decisions, {o['n_queries']} queries; both yes "
               f"{o['both_yes']}, both no {o['both_no']}, only first {o['only_first']}, only second {o['only_second']})")
    yield "definitions:"
    for name, text in figures["definitions"].items():
        yield f"  {name}: {text}"
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
    from pipeline.failure import folder_judgments, run_study

    data = _collection(args)
    retrievers = args.retriever or (sorted(data.imported_runs()) or ["bm25"])
    judges = args.judge or [*folder_judgments(data.folder, data.name), "auto"]
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


def _preference_reasons(args, data, make_client):
    """``(typology, assignments, how they were made)``: ``--reasons typology`` reads the failure
    typology's runs; ``--reasons FILE`` imports; else ``--assign-model`` assigns the typology's H2R
    categories to the H2R queries of ``--retriever`` (the one hard set computable from the data folder)."""
    from pipeline import reason_assignment
    from pipeline.h2r import h2r_report
    from pipeline.retrievers import get_run

    if args.reasons == "typology":
        typology, assignments, report = difficulty.reasons_from_typology_store(data.name)
        return typology, assignments, {"typology_store": report}
    typology = difficulty.load_typology(args.typology)
    if args.reasons:
        return typology, difficulty.load_assignments(args.reasons, typology), {"imported": str(args.reasons)}
    report = h2r_report(data, [get_run(data, args.retriever)], quantile=args.quantile)
    hard_qids = report["retrievers"][args.retriever]["hard"]
    # ask only about the queries the preference step can use (a relevant passage with text, the
    # first --max-queries in topic order), so a capped run makes no assignment call it then drops
    usable = [qid for qid in data.judged_qids if qid in set(hard_qids) and data.relevant_passages(qid)]
    hard = {"h2r": usable[:args.max_queries] if args.max_queries else usable}
    client = make_client(args.assign_model or args.judge_model)
    assignments, assigned = reason_assignment.assign_reasons(client, typology, data.topics, hard)
    return typology, assignments, {"assigned_by": client.provenance.as_dict(), "hard_sets": {
        "h2r": {"retriever": args.retriever, "quantile": args.quantile, "rule": report["rule"],
                "qids": hard_qids, "asked": hard["h2r"]}}, "tasks": assigned}


def cmd_prefer(args) -> None:
    from pipeline import preference
    from pipeline.datasets import load_dataset
    from pipeline.generation import read_answers_jsonl
    from pipeline.llm import make_client

    data = load_dataset(args.dataset, args.data)
    data.require_qrels()
    templates = difficulty.load_templates(args.templates)
    config = preference.PreferenceConfig(
        reason_mode="all" if args.all_reasons else "first", max_queries=args.max_queries,
        max_passages=args.max_passages, passage_chars=args.passage_chars,
        generation=replace(GENERATION_OPTIONS, max_tokens=args.max_tokens))
    judge = make_client(args.judge_model)
    typology, assignments, report = _preference_reasons(args, data, make_client)
    if args.task:
        assignments = [a for a in assignments if a.task in args.task]
    needs_generator = not (args.baseline_answers and args.aware_answers)
    generator = make_client(args.generator) if needs_generator else None

    def side(file):
        if file:
            return preference.AnswerSide(imported=read_answers_jsonl(file, data.topics), imported_from=str(file))
        return preference.AnswerSide(generator)

    result = preference.run_preference(data, assignments, typology, templates, judge, side(args.baseline_answers),
                                       side(args.aware_answers), config, assignment_report=report)
    path = preference.save_result(result)
    out = {"dataset": data.name, "id": result["id"], "path": str(path), "judge": result["judge"]["label"],
           "generators": {k: v["label"] for k, v in result["generators"].items()}, "rule": result["rule"],
           "config": result["config"], "excluded": {k: len(v) for k, v in result["excluded"].items()},
           "study_rate": preference.STUDY_RATES.get(data.name), **result["summary"]}
    if args.json:
        _dump(out)
        return
    print(f"{data.name}: judge {out['judge']}; generators {out['generators']}")
    print(f"rule: {result['rule']}")
    rows = [("all", out["overall"])] + [(f"task {k}", v) for k, v in out["by_task"].items()] + \
        [(f"category {k}", v) for k, v in out["by_category"].items()]
    for label, s in rows:
        rate = "n/a" if s["rate"] is None else f"{s['rate']:.1%} [{s['ci_low']:.1%}, {s['ci_high']:.1%}]"
        p = "n/a" if s["sign_test_p"] is None else f"{s['sign_test_p']:.3g}"
        print(f"  {label}: {s['wins']} win / {s['ties']} tie / {s['losses']} loss ({s['inconsistent']} inconsistent, "
              f"{s['unparseable']} unparseable, {s['failed']} failed); preferred {rate}; sign test p = {p}")
    if out["study_rate"] is not None:
        print(f"  study: {out['study_rate']:.2%} (its own generators and judge)")
    print(f"stored: {path}")


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
                   help="repeatable; NAME: the data folder's imported full-corpus run runs/run.NAME.<dataset>.txt "
                        "(for bm25/dense/tasb/minilm without one: computed here, reported as NAME@computed); "
                        "NAME@computed: the run computed here over the folder's passages (partial corpus); "
                        "NAME=RUNFILE: that file")
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

    p = sub.add_parser("typology", help="LLM-induced failure typology of one task's hard queries")
    collection_args(p)
    p.add_argument("--task", required=True, choices=["h2r", "h2g", "h2j"])
    p.add_argument("--retriever", default="bm25", metavar="NAME[=RUNFILE]", help="the configuration's retriever")
    p.add_argument("--generator", default="embedded", metavar="NAME[=FILE.jsonl]", help="... generator")
    p.add_argument("--judge", default="llama-3.3-70b", metavar="NAME[=FILE]", help="... judge")
    p.add_argument("--setup", default="binary", choices=["binary", "graded"], help="... judging setup")
    p.add_argument("--llm", default="auto", help="model spec: auto, embedded, ollama[:MODEL[@HOST]], openai:MODEL@URL")
    p.add_argument("--typology", default=None, metavar="study|FILE.json",
                   help="import this typology instead of inducing one ('study': the study's ten categories)")
    p.add_argument("--max-rounds", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=8, help="reasons shown per refinement round")
    p.add_argument("--max-categories", type=int, default=8)
    p.add_argument("--max-queries", type=int, default=None, help="keep the N hardest queries (recorded)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--force", action="store_true", help="recompute a finished run (the cache still answers)")
    p.set_defaults(func=cmd_typology)

    p = sub.add_parser("annotations", help="human validation of LLM-assigned reasons: CSV and figures")
    p.add_argument("--import", dest="import_csv", metavar="FILE.csv", help="merge annotation rows from a CSV")
    p.add_argument("--export", dest="export_csv", metavar="FILE.csv", help="write the complete annotations")
    p.add_argument("--report", action="store_true", help="accuracy, precision, recall and kappa with counts")
    p.add_argument("--create-sample", action="store_true", help="draw an annotation sample from typology runs")
    p.add_argument("--run", action="append", default=[], metavar="RUN_ID",
                   help="typology run(s) to sample from (default: the latest finished run per dataset and task)")
    p.add_argument("--sample", default="default", help="sample name")
    p.add_argument("--size", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-annotator", action="store_true", help="each annotator gets their own draw")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_annotations)

    p = sub.add_parser("prefer", help="difficulty-aware vs baseline generation, judged pairwise in both orders")
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--reasons", default=None, metavar="typology|FILE",
                   help="'typology': each task's latest finished failure-typology run of the dataset (its "
                        'categories and assigned reasons); FILE: a JSON list or JSONL of {"qid", "task", '
                        '"categories": [...]}; default: the assign model assigns the typology\'s H2R categories '
                        "to the H2R queries of --retriever")
    p.add_argument("--typology", default=str(difficulty.STUDY_TYPOLOGY), metavar="FILE",
                   help="typology JSON (default: the study's ten categories)")
    p.add_argument("--templates", default=str(difficulty.DEFAULT_TEMPLATES), metavar="FILE",
                   help="difficulty sentence templates JSON (default: the shipped ones)")
    p.add_argument("--all-reasons", action="store_true", help="one sentence per assigned reason (default: first)")
    p.add_argument("--task", action="append", choices=["h2r", "h2g", "h2j"], help="only these tasks (repeatable)")
    p.add_argument("--generator", default="auto", metavar="SPEC",
                   help="generator model, a pipeline.llm spec: auto (default), embedded, ollama[:MODEL[@HOST]], "
                        "openai:MODEL@URL")
    p.add_argument("--baseline-answers", default=None, metavar="FILE.jsonl", help='imported {"qid", "text"} answers')
    p.add_argument("--aware-answers", default=None, metavar="FILE.jsonl",
                   help='imported {"qid", "text"} difficulty-aware answers')
    p.add_argument("--judge-model", default="auto", metavar="SPEC", help="pairwise judge, a pipeline.llm spec (default auto)")
    p.add_argument("--assign-model", default=None, metavar="SPEC", help="reason assignment model (default: the judge)")
    p.add_argument("--retriever", default="bm25", help="H2R retriever when assigning reasons here (default bm25)")
    p.add_argument("--quantile", type=float, default=0.25)
    p.add_argument("--max-queries", type=int, default=None, help="first N judgeable queries (recorded)")
    p.add_argument("--max-passages", type=int, default=3, help="highly relevant passages shown to the judge")
    p.add_argument("--passage-chars", type=int, default=600, help="each passage truncated to this many characters")
    p.add_argument("--max-tokens", type=int, default=GENERATION_OPTIONS.max_tokens,
                   help=f"generation length (default {GENERATION_OPTIONS.max_tokens}, as the zero-shot generation step)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_prefer)
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
