"""``python -m pipeline``: the failure study's command line (every analysis scriptable, ``--json``).

Commands (``python -m pipeline COMMAND --help`` lists each one's options with their defaults)::

    eval-run     per-query effectiveness of a TREC run (ir_measures)
    retrieve     compute a BM25 or dense run over the data folder's passages (named NAME@computed)
    h2r          hard-to-retrieve sets per retriever and their intersection
    coverage     judged queries and how many judged / relevant passages have text
    h2j          hard-to-judge sets: judge/NIST disagreement per query (binary and graded)
    h2g          hard-to-generate sets: BERTScore F1 of zero-shot answers per query
    overlap      the three sets (h2r, h2g, h2j) of one configuration, Venn regions, pairwise figures
    run          every step and every configuration's overlap (resumable); each run a new stored study
    studies      the stored studies of a dataset, newest first (--json: {"studies": [{id, configuration,
                 time, ...}]}); --delete ID removes one
    typology     LLM-induced failure typology of one task's hard queries, reasons assigned per query
    annotations  human validation of the assigned reasons: CSV import/export, figures
    prefer       difficulty-aware vs baseline answers judged pairwise in both orders
    llm          the LLM servers and the response cache: models, check, failures, purge

One name per concept, in every command:

    --retriever NAME[=RUNFILE]      a retriever (data folder's run, computed run, or a run file)
    --generator SPEC | NAME=FILE    the model whose answers are scored (an LLM spec, or imported
                                    {"qid", "text"} JSONL answers named NAME)
    --judge SPEC | NAME[=FILE]      the relevance judge (an LLM spec, the data folder's
                                    judgments/judgments.NAME.<dataset>.txt, or a qrels-format FILE);
                                    in ``prefer``, the pairwise judge (an LLM spec)
    --assigner SPEC                 the model that induces a typology and assigns failure reasons
    --temperature --seed --max-tokens --num-ctx --think/--no-think --keep-alive --concurrency
    --timeout --retries --executor --address
                                    how every LLM of the command is called (see ``--help``);
                                    unset decoding options keep each step's own defaults

LLM SPEC grammar:

    auto                     Ollama at OLLAMA_HOST when a server answers (llama3.2:3b, else qwen3:8b,
                             else its first model that can chat); otherwise the embedded model. The
                             model it resolved to, and why it fell back, is printed with every result
    embedded[:MODEL]         a packaged offline model, no server needed (pipeline.llm.factory lists
                             them; a small model's results say they are not findings)
    ollama[:MODEL[@HOST]]    e.g. ollama:qwen3:8b, ollama:llama3.2:3b@http://gpu-box:11434
    openai:MODEL@BASE_URL    an OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1); key from
                             OPENAI_API_KEY

Environment: OLLAMA_HOST (default http://127.0.0.1:11434), OPENAI_API_KEY, IRDASH_CACHE_DIR.
Results are labelled by the model a spec resolved to (backend:model [digest]), never by the spec.
Errors print one line on stderr and exit with status 1 (2 for a bad option).
"""
from __future__ import annotations

import argparse
import json
import sys

from pipeline import difficulty  # light: its shipped data files are the prefer command's defaults
from pipeline.datasets import DATASETS
from pipeline.h2r import set_line  # a hard set's size, threshold and tie block in one line
from pipeline.judging import DEFAULT_CAP  # LLM judge: judged pairs per query at most

DEFAULT_TIMEOUT_S = 300.0


# ---- option values checked by argparse (the error names the option) ---------------------------------
def _number(kind, low=None, high=None, *, low_open=False, high_open=False, what=""):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what or kind.__name__}, got {text!r}") from None
        if value != value or (low is not None and (value < low or (low_open and value == low))) or \
                (high is not None and (value > high or (high_open and value == high))):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value
    parse.__name__ = what or kind.__name__  # argparse names the type in its own messages
    return parse


POSITIVE_INT = _number(int, 1, what="an integer >= 1")
NONNEGATIVE_INT = _number(int, 0, what="an integer >= 0")
POSITIVE_FLOAT = _number(float, 0, low_open=True, what="a number > 0")
NONNEGATIVE_FLOAT = _number(float, 0, what="a number >= 0")


def PROGRESS_KEY(text: str) -> str:
    """A progress record's key (:mod:`core.jobs.progress`), checked before any work starts."""
    from core.jobs.progress import KEY

    if not KEY.match(text):
        raise argparse.ArgumentTypeError(f"expected letters, digits, '.', '_' and '-' (at most 120), got {text!r}")
    return text


def progress_key_arg(p) -> None:
    """``--progress-key``: the one way a dashboard job asks a long command for a progress record
    (``run`` uses its ``--study-id`` as the key)."""
    p.add_argument("--progress-key", type=PROGRESS_KEY, default=None, metavar="KEY",
                   help="write this job's progress record (stage n of m, items done of total) under KEY, "
                        "for the dashboard's jobs table")
QUANTILE = _number(float, 0, 1, low_open=True, high_open=True, what="a number strictly between 0 and 1")


def _cap(text: str):
    """``--cap N`` (judged pairs per query) or ``none`` (every pair)."""
    return None if text.strip().lower() == "none" else POSITIVE_INT(text)


_cap.__name__ = "cap"


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown after each option's help, except where there is none to show (None, flags)."""

    def _get_help_string(self, action):
        if action.default in (None, False) or isinstance(action, argparse._StoreConstAction) \
                or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


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
        hard_mean = "n/a" if r["hard_mean"] is None else f"{r['hard_mean']:.4f}"
        print(f"  mean {args.measure} {r['mean']:.4f} over {r['n_queries']} queries; H2R: {set_line(r['hard_set'])}, "
              f"mean {hard_mean}: {' '.join(r['hard'])}")
        if r["hard_set"]["warning"]:
            print(f"  warning: {r['hard_set']['warning']}")
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

    from core.jobs.progress import ProgressWriter
    from pipeline.llm import make_client
    from pipeline.typology.categories import resolve_typology
    from pipeline.typology.induction import InductionConfig
    from pipeline.typology.runner import run_typology, typology_stages
    from pipeline.typology.sources import HardSetConfig, hard_queries
    from pipeline.typology.store import TypologyStore

    hard_config = HardSetConfig(dataset=args.dataset, task=args.task, retriever=args.retriever,
                                generator=args.generator, judge=args.judge, setup=args.setup,
                                quantile=args.quantile, data=args.data, qrels=args.qrels, topics=args.topics,
                                passages=args.passages, cap=args.cap, encoder=args.encoder,
                                aggregate=args.aggregate, partial_references=args.partial_references,
                                max_queries=args.max_queries)
    config = InductionConfig(batch_size=args.batch_size, max_rounds=args.max_rounds,
                             max_categories=args.max_categories, seed=args.seed or 0)
    imported = resolve_typology(args.typology, args.task) if args.typology else None
    # the job's progress record: the hard set (which may generate or judge first), then the run's stages
    with ProgressWriter(args.progress_key, 1 + typology_stages(config, bool(imported))) as tracker:
        tracker.stage(f"{args.task.upper()} hard set of the configuration")
        dataset, queries, hard_set = hard_queries(hard_config, llm_options=_llm_options(args))
        client = make_client(args.assigner, **_llm_options(args, step="typology"))
        bar = tqdm(total=config.max_rounds, desc=f"{dataset} {args.task}: rounds", unit="round",
                   disable=bool(imported), file=sys.stderr)

        def on_round(rnd) -> None:
            bar.update(1)
            bar.set_postfix_str(f"{len(rnd.categories)} categories, {rnd.status}"
                                + (", unchanged" if rnd.unchanged else ""))

        with TypologyStore() as store:
            result = run_typology(client, store, dataset=dataset, task=args.task, queries=queries,
                                  hard_set=hard_set, config=config, imported=imported, force=args.force,
                                  on_round=on_round, progress=tracker)
        bar.close()
    if args.json:
        _dump(result)
        return
    print(f"{result['run_id']}: {result['typology']} -- {result['model']['label']}")
    _print_resolution("assigner", result["model"])
    print(f"configuration: retriever {args.retriever}, generator {args.generator}, judge {args.judge} "
          f"({args.setup})")
    print(f"{result['n_queries']} hard queries ({hard_set['n_hard']} in the set); "
          f"{result['n_rounds']} round(s), stop: {result['stop_reason'] or 'imported'}")
    if (hard_set.get("set") or {}).get("warning"):
        print(f"warning: ties decide membership: {hard_set['set']['warning']}")
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


def _keep_alive(value: str | None):
    """Ollama's keep_alive: a duration string ("5m", "1h") or seconds ("-1": keep loaded)."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def _llm_options(args, step: str | None = None) -> dict:
    """``make_client`` keyword arguments from the common LLM options (decoding options left unset
    keep each step's own defaults)."""
    overrides = {"temperature": args.temperature, "seed": args.seed, "max_tokens": args.max_tokens,
                 "num_ctx": args.num_ctx, "think": args.think}
    options = {"timeout": args.timeout, "retries": args.retries, "executor": args.executor,
               "address": args.address, "concurrency": args.concurrency, "keep_alive": _keep_alive(args.keep_alive),
               "overrides": {k: v for k, v in overrides.items() if v is not None}}
    return {**options, "step": step} if step else options


LLM_SPEC_KINDS = ("auto", "embedded", "ollama", "openai")


def _check_models(args, components) -> None:
    """Check the LLMs among ``components`` (``--generator``/``--judge`` values) before any data is
    loaded, so a dead server or a missing model fails the command in seconds
    (:class:`pipeline.llm.LLMUnavailable`). Imported files and the data folder's judges are skipped."""
    from pipeline.llm import make_client

    for text in components:
        if text and "=" not in text and text.partition(":")[0].lower() in LLM_SPEC_KINDS:
            make_client(text, **{**_llm_options(args), "executor": "local"})


def _resolution_lines(role: str, provenance: dict):
    """The resolved model of a non-explicit spec (``auto``) and why it fell back, under a result."""
    if provenance.get("resolution"):
        yield f"  {role}: {provenance['resolution']}"


def _print_resolution(role: str, provenance: dict) -> None:
    for line in _resolution_lines(role, provenance):
        print(line)


def cmd_h2j(args) -> None:
    _check_models(args, [args.judge])
    from pipeline.failure import judgment_values, judgments_for, task_hard_set
    from pipeline.h2r import set_summary

    data = _collection(args)
    out = {"dataset": data.name, "quantile": args.quantile}
    for setup in args.setup or ["binary", "graded"]:
        judgments = judgments_for(data, args.judge, setup, cap=args.cap, llm_options=_llm_options(args),
                                  progress=not args.json)
        values, info = judgment_values(data, judgments)
        hard = task_hard_set(values, "h2j", args.quantile)
        out[setup] = {"judge": judgments.judge, "per_query": values, "h2j": list(hard.qids),
                      "h2j_set": set_summary(hard), **info}
    if args.json:
        _dump(out)
        return
    for setup in args.setup or ["binary", "graded"]:
        r = out[setup]
        prov = r["provenance"]
        print(f"{data.name} {setup} judge {prov.get('label', r['judge'])}: {r['n_queries']} queries, "
              f"{r['n_pairs_compared']} pairs (cap {r['cap'] or 'none'}), {r['n_unparseable']} unparseable; "
              f"H2J {set_line(r['h2j_set'])}: {' '.join(r['h2j'])}")
        _print_resolution("judge", prov)
        if r["h2j_set"]["warning"]:
            print(f"  warning: ties decide membership: {r['h2j_set']['warning']}")


def cmd_h2g(args) -> None:
    _check_models(args, args.generator)
    from pipeline.failure import generation_for, generation_values, reference_note, task_hard_set
    from pipeline.h2r import set_summary

    data = _collection(args)
    out = {"dataset": data.name, "quantile": args.quantile, "generators": {}}
    for arg in args.generator:
        gen = generation_for(data, arg, llm_options=_llm_options(args), progress=not args.json)
        values, info = generation_values(data, gen, args.encoder, args.aggregate, args.partial_references)
        hard = task_hard_set(values, "h2g", args.quantile)
        out["generators"][gen.name] = {"provenance": gen.provenance, "per_query": values, "h2g": list(hard.qids),
                                       "h2g_set": set_summary(hard), **info}
    if args.json:
        _dump(out)
        return
    for name, r in out["generators"].items():
        prov = r["provenance"]
        print(f"{data.name} generator {prov.get('label', name)}: {len(r['per_query'])} queries scored, "
              f"{r['n_empty_answers']} empty answers, {r['n_failed_generations']} failed calls; "
              f"H2G {set_line(r['h2g_set'])}: {' '.join(r['h2g'])}")
        _print_resolution("generator", prov)
        print(f"  BERTScore: {r['label']}, {r['aggregate']} over the relevant passages")
        print(f"  {reference_note(r)}")
        if r["h2g_set"]["warning"]:
            print(f"  warning: ties decide membership: {r['h2g_set']['warning']}")


def cmd_overlap(args) -> None:
    _check_models(args, [args.generator, args.judge])
    from pipeline.failure import failure_sets

    result = failure_sets(args.dataset, retriever=args.retriever, generator=args.generator, judge=args.judge,
                          setup=args.setup, quantile=args.quantile, data_dir=args.data, qrels=args.qrels,
                          topics=args.topics, passages=args.passages, encoder=args.encoder, cap=args.cap,
                          llm_options=_llm_options(args), progress=not args.json,
                          partial_references=args.partial_references)
    out = result.as_dict()
    if args.json:
        _dump(out)
        return
    for line in _overlap_lines(out):
        print(line)


def _overlap_lines(out: dict):
    """The overlap's text output: every number with what produced it (components, rule, test)."""
    from pipeline.failure import reference_note

    c, prov = out["configuration"], out["provenance"]
    gen, judge = prov["generator"], prov["judge"]
    yield f"{out['dataset']}: {out['n_queries']} queries scored by all three tasks; q = {c['quantile']}"
    yield f"  retriever {c['retriever']}: {prov['retriever'].get('provenance', '')}"
    yield (f"  generator {c['generator']}: {gen['provenance'].get('label', '')}; BERTScore {gen['bertscore']['label']} "
           f"({gen['bertscore']['aggregate']} over grade-2/3 passages); {reference_note(gen['bertscore'])}")
    yield from _resolution_lines("generator", gen["provenance"])
    yield (f"  judge {c['judge']} ({c['setup']}): {judge['provenance'].get('label', '')}; "
           f"{judge['n_pairs_compared']} pairs compared, cap {judge['cap'] or 'none'} per query")
    yield from _resolution_lines("judge", judge["provenance"])
    yield f"  rule: {prov['conventions']['quantile']}"
    for task in ("h2r", "h2g", "h2j"):
        yield f"  {task} {set_line(out['set_info'][task])}: {' '.join(out[task])}"
        if out["set_info"][task]["warning"]:
            yield f"    warning: ties decide membership: {out['set_info'][task]['warning']}"
    yield f"  all three: {out['all_three']['count']} ({out['all_three']['share']:.1%})"
    for pair, fig in out["pairwise"].items():
        yield (f"  {pair}: {fig['count']} (expected {fig['expected_if_independent']:.2f}, p = {fig['p_value']:.3g}, "
               f"Jaccard {fig['jaccard']:.2f})")
    yield (f"  p: one-sided hypergeometric P(X >= overlap), X ~ Hypergeom(N = {out['n_queries']}, |A|, |B|) "
           f"(scipy.stats), each pair on its own, no multiple-comparison correction")


def cmd_run(args) -> None:
    _check_models(args, [*(args.generator or ["auto"]), *(args.judge or ["auto"])])
    from pipeline.failure import folder_judgments, run_study

    data = _collection(args)
    retrievers = args.retriever or (sorted(data.imported_runs()) or ["bm25"])
    judges = args.judge or [*folder_judgments(data.folder, data.name), "auto"]
    study = run_study(data, retrievers=retrievers, generators=args.generator or ["auto"], judges=judges,
                      setups=args.setup or ["binary", "graded"], quantile=args.quantile, encoder=args.encoder,
                      aggregate=args.aggregate, cap=args.cap, max_queries=args.max_queries,
                      llm_options=_llm_options(args), log=(lambda m: print(m, file=sys.stderr)),
                      study_id=args.study_id, progress_key=args.study_id,
                      partial_references=args.partial_references)
    if args.out:
        from core.atomic import atomic_write_text
        atomic_write_text(args.out, json.dumps(study, ensure_ascii=False, indent=1))
    if args.json:
        _dump(study)
        return
    for name, g in study["generators"].items():
        print(f"generator {name}: {g['provenance'].get('label', name)}; BERTScore {g['bertscore']['label']}")
        _print_resolution("generator", g["provenance"])
    for name, per_setup in study["judges"].items():
        prov = next(iter(per_setup.values()))["info"]["provenance"]
        print(f"judge {name}: {prov.get('label', name)}")
        _print_resolution("judge", prov)
    for label, c in study["configurations"].items():
        a = c["analysis"]
        largest = a["largest_pairwise"]
        print(f"{label}: all three {a['all_three']['share']:.1%}; exclusive "
              + ", ".join(f"{t} {e['share']:.0%}" for t, e in a["exclusive"].items() if e["share"] is not None)
              + f"; largest pair {largest['pair']} ({largest['count']}, p = {largest['p_value']:.3g})"
              + (f"  [{c['note']}]" if c["note"] else ""))
        for task, info in c["set_info"].items():
            if info["warning"]:
                print(f"  warning: ties decide membership: {info['warning']}")


def cmd_studies(args) -> None:
    from pipeline import studies

    if args.delete:
        path = studies.delete_study(args.dataset, args.delete)
        print(f"deleted study {args.delete} ({path})", file=sys.stderr)
    listed = studies.list_studies(args.dataset, args.data)
    if args.json:
        _dump({"dataset": args.dataset, "studies": [{k: s[k] for k in ("id", "configuration", "time", "finished",
                                                                         "n_configurations", "path")}
                                                     for s in listed]})
        return
    if not listed:
        print(f"{args.dataset}: no stored study")
    for s in listed:
        print(studies.describe(s))


def _preference_reasons(args, data, make_client, tracker):
    """``(typology, assignments, how they were made)``: ``--reasons typology`` reads the failure
    typology's runs; ``--reasons FILE`` imports; else ``--assigner`` assigns the typology's H2R
    categories to the H2R queries of ``--retriever`` (the one hard set computable from the data folder)."""
    from pipeline import reason_assignment
    from pipeline.h2r import h2r_report
    from pipeline.retrievers import get_run

    if args.reasons == "typology":
        typology, assignments, report = difficulty.reasons_from_typology_store(data.name, model=args.reasons_model)
        return typology, assignments, {"typology_store": report}
    typology = difficulty.load_typology(args.typology)
    if args.reasons:
        return typology, difficulty.load_assignments(args.reasons, typology), {"imported": str(args.reasons)}
    run = get_run(data, args.retriever)
    report = h2r_report(data, [run], quantile=args.quantile)
    hard_qids = report["retrievers"][run.name]["hard"]  # NAME@computed when computed here
    # ask only about the queries the preference step can use (a relevant passage with text, the
    # first --max-queries in topic order), so a capped run makes no assignment call it then drops
    usable = [qid for qid in data.judged_qids if qid in set(hard_qids) and data.relevant_passages(qid)]
    hard = {"h2r": usable[:args.max_queries] if args.max_queries else usable}
    client = make_client(args.assigner or args.judge, **_llm_options(args, step="prefer:assignment"))
    tracker.stage("assigning reasons to the H2R hard queries", len(hard["h2r"]), "query")
    assignments, assigned = reason_assignment.assign_reasons(client, typology, data.topics, hard,
                                                             on_progress=tracker.advance)
    return typology, assignments, {"assigned_by": client.provenance.as_dict(), "hard_sets": {
        "h2r": {"retriever": run.name, "quantile": args.quantile, "rule": report["rule"],
                "qids": hard_qids, "asked": hard["h2r"]}}, "tasks": assigned}


def cmd_prefer(args) -> None:
    from dataclasses import replace

    from core.jobs.progress import ProgressWriter
    from pipeline import preference
    from pipeline.datasets import load_dataset
    from pipeline.generation import GENERATION_OPTIONS, read_answers_jsonl
    from pipeline.llm import make_client

    # the decoding options given on the command line go into the recorded configuration (both roles)
    llm = _llm_options(args)
    overrides = llm.pop("overrides")
    config = preference.PreferenceConfig(
        reason_mode="all" if args.all_reasons else "first", max_queries=args.max_queries,
        max_passages=args.max_passages, passage_chars=args.passage_chars,
        generation=replace(GENERATION_OPTIONS, **overrides),
        judge=replace(preference.PreferenceConfig().judge, **overrides))
    # the job's progress record: (assigning reasons,) baseline answers, difficulty-aware answers, judging
    stages = preference.STAGES + (0 if args.reasons else 1)
    with ProgressWriter(args.progress_key, stages) as tracker:
        judge = make_client(args.judge, **llm, step="prefer:judge")
        needs_generator = not (args.baseline_answers and args.aware_answers)
        generator = make_client(args.generator, **llm, step="prefer:generation") if needs_generator else None
        self_judging = generator is not None and generator.provenance.identity() == judge.provenance.identity()
        if self_judging and not args.allow_self_judging:
            raise ValueError(f"prefer: the judge and the generator are the same model ({judge.provenance.label}): it "
                             f"would judge its own answers; choose another --judge or --generator, or pass "
                             f"--allow-self-judging (the result then says so)")
        data = load_dataset(args.dataset, args.data)
        data.require_qrels()
        templates = difficulty.load_templates(args.templates)
        typology, assignments, report = _preference_reasons(args, data, make_client, tracker)
        if args.task:
            assignments = [a for a in assignments if a.task in args.task]

        def side(file):
            if file:
                return preference.AnswerSide(imported=read_answers_jsonl(file, data.topics),
                                             imported_from=str(file))
            return preference.AnswerSide(generator)

        result = preference.run_preference(data, assignments, typology, templates, judge,
                                           side(args.baseline_answers), side(args.aware_answers), config,
                                           assignment_report=report, progress=tracker)
        result["self_judging"] = self_judging
        path = preference.save_result(result)
    out = {"dataset": data.name, "id": result["id"], "path": str(path), "judge": result["judge"]["label"],
           "generators": {k: v["label"] for k, v in result["generators"].items()}, "rule": result["rule"],
           "self_judging": self_judging, "resolution": {
               role: prov.resolution for role, prov in (("judge", judge.provenance),
                                                        ("generator", generator.provenance if generator else None))
               if prov is not None and prov.resolution},
           "config": result["config"], "excluded": {k: len(v) for k, v in result["excluded"].items()},
           "study_rate": preference.STUDY_RATES.get(data.name), **result["summary"]}
    if args.json:
        _dump(out)
        return
    print(f"{data.name}: judge {out['judge']}; generators {out['generators']}")
    for role, line in out["resolution"].items():
        print(f"  {role}: {line}")
    if self_judging:
        print("  self-judging: the judge judged its own answers (--allow-self-judging)")
    print(f"rule: {result['rule']}")
    rows = [("all", out["overall"])] + [(f"task {k}", v) for k, v in out["by_task"].items()] + \
        [(f"category {k}", v) for k, v in out["by_category"].items()]
    for label, s in rows:
        rate = "n/a" if s["rate"] is None else f"{s['rate']:.1%} [{s['ci_low']:.1%}, {s['ci_high']:.1%}]"
        p = "n/a" if s["sign_test_p"] is None else f"{s['sign_test_p']:.3g}"
        print(f"  {label}: {s['queries']} queries ({s['pairs']} pairs): "
              f"{s['wins']} win / {s['ties']} tie / {s['losses']} loss ({s['inconsistent']} inconsistent, "
              f"{s['unparseable']} unparseable, {s['failed']} failed); preferred {rate}; sign test p = {p}")
    verdicts = out["overall"]["verdict_rule"]
    if verdicts["rate"] is not None:
        print(f"  verdict rule: {verdicts['aware']} of {verdicts['verdicts']} verdicts prefer the difficulty-aware "
              f"answer ({verdicts['rate']:.1%}); {result['verdict_rule']}")
    if out["study_rate"] is not None:
        print(f"  study: {out['study_rate']:.2%} (its own generators and judge; its counting rule is not stated)")
    print(f"stored: {path}")


# ---- pipeline llm: servers and the response cache -----------------------------------------------
def cmd_llm_models(args) -> None:
    from pipeline.llm.backends.ollama_backend import model_capabilities, ollama_host, ollama_models

    models = ollama_models(args.host, timeout=args.timeout, model="(model list)")
    rows = [{"model": name, "digest": digest, **model_capabilities(name, args.host, timeout=args.timeout)}
            for name, digest in sorted(models.items())]
    if args.json:
        _dump({"host": ollama_host(args.host), "models": rows})
        return
    print(f"Ollama at {ollama_host(args.host)}: {len(rows)} models")
    for r in rows:
        print(f"  {r['model']}  {r['digest'][:12]}  {'chat' if r['chat'] else 'cannot chat'} ({r['why']})")


def cmd_llm_check(args) -> None:
    from pipeline.llm import make_backend

    backend = make_backend(args.spec, timeout=args.timeout)
    resolve = getattr(backend, "resolve", None)
    if resolve is not None:
        resolve()  # LLMUnavailable (one line, exit 1) when the model cannot be reached
    prov = backend.provenance.as_dict()
    if args.json:
        _dump({"spec": args.spec, "ok": True, "provenance": prov})
        return
    print(f"{args.spec}: {prov['label']} is available" + (f" at {prov['endpoint']}" if prov["endpoint"] else ""))
    if prov["resolution"]:
        print(f"  {prov['resolution']}")


def _cache(args):
    from pipeline.llm import ResponseCache

    return ResponseCache(args.cache_file)


def cmd_llm_failures(args) -> None:
    import datetime

    rows = _cache(args).failures(model=args.model, step=args.step, limit=args.limit)
    if args.json:
        _dump({"failures": rows})
        return
    for r in rows:
        when = datetime.datetime.fromtimestamp(r["at"]).isoformat(sep=" ", timespec="seconds")
        print(f"{when}  {r['backend']}:{r['model']}  {r['step'] or '-'}  attempt {r['attempt']}  "
              f"{' '.join(r['error'].split())}")
    print(f"{len(rows)} failed attempts" + (f" (the newest {args.limit})" if args.limit else ""), file=sys.stderr)


def cmd_llm_answers(args) -> None:
    rows = _cache(args).answers_by_model()
    if args.json:
        _dump({"answers": rows})
        return
    for r in rows:
        print(f"{r['answers']:7d}  {r['backend']}:{r['model']}  {r['step'] or '-'}")


def cmd_llm_purge(args) -> None:
    if args.model is None and args.step is None:
        raise ValueError("llm purge: give --model and/or --step (the whole cache is never purged at once)")
    n = _cache(args).purge(model=args.model, step=args.step, backend=args.backend)
    if args.json:
        _dump({"purged": n, "model": args.model, "step": args.step, "backend": args.backend})
        return
    print(f"purged {n} cached answers")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", formatter_class=_HelpFormatter,
                                     description="The query-failure study's command line (every analysis "
                                                 "scriptable, --json); COMMAND --help lists its options.",
                                     epilog=__doc__[__doc__.index("One name per concept"):])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help_text):
        return sub.add_parser(name, help=help_text, description=help_text, formatter_class=_HelpFormatter)

    p = command("eval-run", "per-query effectiveness of a TREC run (ir_measures)")
    p.add_argument("--qrels", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--measure", default="nDCG@10", help="ir_measures name")
    p.add_argument("--complete", action="store_true", help="judged queries missing from the run score 0 (trec_eval -c)")
    p.add_argument("--allow-partial", action="store_true", help="score a run that covers under half the judged queries")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval_run)

    def compute_args(p):
        p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
        p.add_argument("--depth", type=POSITIVE_INT, default=1000, help="passages retrieved per query (computed runs)")
        p.add_argument("--k1", type=NONNEGATIVE_FLOAT, default=0.9, help="BM25 k1 (computed runs)")
        p.add_argument("--b", type=_number(float, 0, 1, what="a number between 0 and 1"), default=0.4,
                       help="BM25 b (computed runs)")
        p.add_argument("--threads", type=POSITIVE_INT, default=2, help="search threads (computed runs)")
        p.add_argument("--json", action="store_true")

    p = command("retrieve", "compute a BM25 or dense run over the data folder's passages")
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--retriever", required=True, choices=["bm25", "dense", "tasb", "minilm"])
    compute_args(p)
    p.set_defaults(func=cmd_retrieve)

    p = command("h2r", "hard-to-retrieve query sets and their intersection")
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--retriever", required=True, action="append", metavar="NAME[=RUNFILE]",
                   help="repeatable; NAME: the data folder's imported full-corpus run runs/run.NAME.<dataset>.txt "
                        "(for bm25/dense/tasb/minilm without one: computed here, reported as NAME@computed); "
                        "NAME@computed: the run computed here over the folder's passages (partial corpus); "
                        "NAME=RUNFILE: that file")
    p.add_argument("--quantile", type=QUANTILE, default=0.25, help="the hard set is the bottom q of the queries")
    p.add_argument("--measure", default="nDCG@10")
    compute_args(p)
    p.set_defaults(func=cmd_h2r)

    def collection_args(p):
        p.add_argument("--dataset", choices=list(DATASETS))
        p.add_argument("--qrels", default=None, help="any TREC-style qrels file instead of --dataset")
        p.add_argument("--topics", default=None, help="qid<TAB>query file (with --qrels)")
        p.add_argument("--passages", default=None, help="pid<TAB>text file (with --qrels)")
        p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
        p.add_argument("--quantile", type=QUANTILE, default=0.25,
                       help="hard sets: the bottom q (H2R, H2G) or top q (H2J) of the queries")
        p.add_argument("--json", action="store_true")

    def cap_arg(p):
        p.add_argument("--cap", type=_cap, default=DEFAULT_CAP, metavar="N|none",
                       help="LLM judge: judged pairs per query at most (stratified by grade); none: every pair")

    def bertscore_args(p):
        p.add_argument("--encoder", default="auto", choices=["auto", "roberta-large", "minilm"],
                       help="BERTScore encoder; auto: roberta-large when loadable, else minilm (stated with results)")
        p.add_argument("--aggregate", default="max", choices=["max", "mean"], help="BERTScore over several passages")
        p.add_argument("--partial-references", default="exclude", choices=["exclude", "include"],
                       help="H2G: queries with only some of their grade-2/3 passages' texts are excluded (and "
                            "counted), or scored against the passages that have text")

    def llm_args(p):
        g = p.add_argument_group("LLM calls", "how every LLM of this command is called; decoding options left "
                                              "unset keep each step's own (answers: 128 tokens, greedy)")
        g.add_argument("--temperature", type=NONNEGATIVE_FLOAT, default=None, help="sampling temperature (0: greedy)")
        g.add_argument("--seed", type=NONNEGATIVE_INT, default=None, help="decoding seed (typology: also its shuffle)")
        g.add_argument("--max-tokens", type=POSITIVE_INT, default=None, help="tokens per reply at most")
        g.add_argument("--num-ctx", type=POSITIVE_INT, default=None, help="context window (Ollama num_ctx)")
        g.add_argument("--think", action=argparse.BooleanOptionalAction, default=None,
                       help="let reasoning models reason before answering (default: off; reasoning is "
                            "stripped from answers either way)")
        g.add_argument("--keep-alive", default=None, metavar="DURATION",
                       help="Ollama keeps the model loaded this long after a request (e.g. 5m, 1h, -1)")
        g.add_argument("--concurrency", type=POSITIVE_INT, default=None,
                       help="requests in flight (default: 1 for Ollama and the embedded model, 4 for OpenAI-"
                            "compatible servers; set Ollama's to its OLLAMA_NUM_PARALLEL)")
        g.add_argument("--timeout", type=POSITIVE_FLOAT, default=DEFAULT_TIMEOUT_S,
                       help="seconds one request may take (waiting for a free slot does not count); a request "
                            "past it stops the step")
        g.add_argument("--retries", type=NONNEGATIVE_INT, default=2, help="extra attempts after a server error")
        g.add_argument("--executor", choices=["local", "ray"], default="local",
                       help="ray: fan the LLM calls out over Ray tasks, every call through the response cache")
        g.add_argument("--address", default=None,
                       help="Ray cluster for --executor ray: auto, host:port, ray://host:10001 (default: [ray] "
                            "address, else a local Ray instance)")

    generator_help = "an LLM spec (see python -m pipeline --help), or NAME=FILE.jsonl: imported answers"
    judge_help = ("an LLM spec, NAME: the data folder's judgments/judgments.NAME.<dataset>.txt, or NAME=FILE: "
                  "qrels-format judgments")

    p = command("h2j", "hard-to-judge sets: judge/NIST disagreement per query (binary and graded)")
    collection_args(p)
    p.add_argument("--judge", required=True, metavar="SPEC|NAME[=FILE]", help=judge_help)
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="repeatable (default: both)")
    cap_arg(p)
    llm_args(p)
    p.set_defaults(func=cmd_h2j)

    p = command("h2g", "hard-to-generate sets: BERTScore F1 of zero-shot answers per query")
    collection_args(p)
    p.add_argument("--generator", required=True, action="append", metavar="SPEC|NAME=FILE",
                   help="repeatable; " + generator_help)
    bertscore_args(p)
    llm_args(p)
    p.set_defaults(func=cmd_h2g)

    p = command("overlap", "the three failure sets of one configuration and their overlap")
    collection_args(p)
    p.add_argument("--retriever", required=True, metavar="NAME[=RUNFILE]")
    p.add_argument("--generator", required=True, metavar="SPEC|NAME=FILE", help=generator_help)
    p.add_argument("--judge", required=True, metavar="SPEC|NAME[=FILE]", help=judge_help)
    p.add_argument("--setup", required=True, choices=["binary", "graded"])
    cap_arg(p)
    bertscore_args(p)
    llm_args(p)
    p.set_defaults(func=cmd_overlap)

    p = command("run", "every failure-study step and every configuration's overlap (resumable)")
    collection_args(p)
    p.add_argument("--retriever", action="append", metavar="NAME[=RUNFILE]",
                   help="repeatable (default: the data folder's imported runs)")
    p.add_argument("--generator", action="append", metavar="SPEC|NAME=FILE",
                   help="repeatable; " + generator_help + " (default: auto)")
    p.add_argument("--judge", action="append", metavar="SPEC|NAME[=FILE]",
                   help="repeatable; " + judge_help + " (default: the data folder's judgment files and auto)")
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="repeatable (default: both)")
    p.add_argument("--out", default=None, help="also write the study JSON here")
    p.add_argument("--max-queries", type=POSITIVE_INT, default=None,
                   help="only the first N judged queries in topic order (recorded with the study)")
    p.add_argument("--study-id", default=None, help="store the study under this id (the dashboard's jobs pass "
                                                    "one, so that their row links to it); default: a new id")
    cap_arg(p)
    bertscore_args(p)
    llm_args(p)
    p.set_defaults(func=cmd_run)

    p = command("studies", "the stored failure studies of a dataset (newest first); delete one")
    p.add_argument("--dataset", required=True, help="dl19..dl22, or a --qrels collection's name")
    p.add_argument("--data", default=None, help="only the studies computed from this data folder")
    p.add_argument("--delete", default=None, metavar="ID", help="delete this study for good")
    p.add_argument("--json", action="store_true",
                   help='{"dataset", "studies": [{"id", "configuration", "time", ...}]}')
    p.set_defaults(func=cmd_studies)

    p = command("coverage", "judged queries and passage-text coverage")
    p.add_argument("--dataset", default="all", choices=[*DATASETS, "all"])
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_coverage)

    p = command("typology", "LLM-induced failure typology of one task's hard queries")
    collection_args(p)
    p.add_argument("--task", required=True, choices=["h2r", "h2g", "h2j"])
    p.add_argument("--assigner", default="auto", metavar="SPEC",
                   help="the model that induces the typology and assigns reasons (an LLM spec)")
    p.add_argument("--retriever", default="bm25", metavar="NAME[=RUNFILE]", help="the configuration's retriever")
    p.add_argument("--generator", default="embedded", metavar="SPEC|NAME=FILE",
                   help="the configuration's generator (whose answers define H2G)")
    p.add_argument("--judge", default="llama-3.3-70b", metavar="SPEC|NAME[=FILE]", help="the configuration's judge")
    p.add_argument("--setup", default="binary", choices=["binary", "graded"], help="the configuration's judging setup")
    p.add_argument("--typology", default=None, metavar="study|FILE.json",
                   help="import this typology instead of inducing one ('study': the study's ten categories)")
    p.add_argument("--max-rounds", type=POSITIVE_INT, default=6)
    p.add_argument("--batch-size", type=POSITIVE_INT, default=8, help="reasons shown per refinement round")
    p.add_argument("--max-categories", type=POSITIVE_INT, default=8)
    p.add_argument("--max-queries", type=POSITIVE_INT, default=None, help="keep the N hardest queries (recorded)")
    p.add_argument("--force", action="store_true", help="recompute a finished run (the cache still answers)")
    progress_key_arg(p)
    cap_arg(p)
    bertscore_args(p)
    llm_args(p)
    p.set_defaults(func=cmd_typology)

    p = command("annotations", "human validation of LLM-assigned reasons: CSV and figures")
    p.add_argument("--import", dest="import_csv", metavar="FILE.csv", help="merge annotation rows from a CSV")
    p.add_argument("--export", dest="export_csv", metavar="FILE.csv", help="write the complete annotations")
    p.add_argument("--report", action="store_true", help="accuracy, precision, recall and kappa with counts")
    p.add_argument("--create-sample", action="store_true", help="draw an annotation sample from typology runs")
    p.add_argument("--run", action="append", default=[], metavar="RUN_ID",
                   help="typology run(s) to sample from (default: the latest finished run per dataset and task)")
    p.add_argument("--sample", default="default", help="sample name")
    p.add_argument("--size", type=POSITIVE_INT, default=50, help="items in the sample")
    p.add_argument("--seed", type=NONNEGATIVE_INT, default=0, help="the sample's draw")
    p.add_argument("--per-annotator", action="store_true", help="each annotator gets their own draw")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_annotations)

    p = command("prefer", "difficulty-aware vs baseline generation, judged pairwise in both orders")
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--reasons", default=None, metavar="typology|FILE",
                   help="'typology': each task's latest finished failure-typology run of the dataset (its "
                        'categories and assigned reasons); FILE: a JSON list or JSONL of {"qid", "task", '
                        '"categories": [...]}; default: --assigner assigns the typology\'s H2R categories '
                        "to the H2R queries of --retriever")
    p.add_argument("--reasons-model", default=None, metavar="LABEL",
                   help="with --reasons typology: use the runs of this model (a run's model label, e.g. "
                        "ollama:qwen3:8b); default: the model of the dataset's newest finished run")
    p.add_argument("--typology", default=str(difficulty.STUDY_TYPOLOGY), metavar="FILE",
                   help="typology JSON (default: the study's ten categories)")
    p.add_argument("--templates", default=str(difficulty.DEFAULT_TEMPLATES), metavar="FILE",
                   help="difficulty sentence templates JSON (default: the shipped ones)")
    p.add_argument("--all-reasons", action="store_true", help="one sentence per assigned reason (default: first)")
    p.add_argument("--task", action="append", choices=["h2r", "h2g", "h2j"], help="only these tasks (repeatable)")
    p.add_argument("--generator", default="auto", metavar="SPEC",
                   help="the model that writes the baseline and difficulty-aware answers (an LLM spec)")
    p.add_argument("--baseline-answers", default=None, metavar="FILE.jsonl", help='imported {"qid", "text"} answers')
    p.add_argument("--aware-answers", default=None, metavar="FILE.jsonl",
                   help='imported {"qid", "text"} difficulty-aware answers')
    p.add_argument("--judge", default="auto", metavar="SPEC", help="the pairwise judge (an LLM spec)")
    p.add_argument("--allow-self-judging", action="store_true",
                   help="let the judge be the generator's model (refused otherwise; the result then says so)")
    p.add_argument("--assigner", default=None, metavar="SPEC",
                   help="the model that assigns failure reasons (default: the judge)")
    p.add_argument("--retriever", default="bm25", help="H2R retriever when assigning reasons here")
    p.add_argument("--quantile", type=QUANTILE, default=0.25, help="H2R: the bottom q of the queries")
    p.add_argument("--max-queries", type=POSITIVE_INT, default=None, help="first N judgeable queries (recorded)")
    p.add_argument("--max-passages", type=POSITIVE_INT, default=3, help="highly relevant passages shown to the judge")
    p.add_argument("--passage-chars", type=_number(int, 50, what="an integer >= 50"), default=600,
                   help="each passage truncated to this many characters")
    progress_key_arg(p)
    p.add_argument("--json", action="store_true")
    llm_args(p)
    p.set_defaults(func=cmd_prefer)

    p = command("llm", "LLM servers and the response cache (cache/llm/responses.sqlite)")
    llm_sub = p.add_subparsers(dest="llm_command", required=True, metavar="ACTION")

    def action(name, help_text, func):
        a = llm_sub.add_parser(name, help=help_text, description=help_text, formatter_class=_HelpFormatter)
        a.add_argument("--json", action="store_true")
        a.set_defaults(func=func)
        return a

    def cache_file_arg(a):
        a.add_argument("--cache-file", default=None, metavar="FILE",
                       help="the response cache (default: cache/llm/responses.sqlite under IRDASH_CACHE_DIR)")

    a = action("models", "the models an Ollama server has: digest, and whether each can chat", cmd_llm_models)
    a.add_argument("--host", default=None, help="Ollama server (default: OLLAMA_HOST, else http://127.0.0.1:11434)")
    a.add_argument("--timeout", type=POSITIVE_FLOAT, default=5.0, help="seconds to wait for the server")
    a = action("check", "resolve an LLM spec and check that its model is there (exit 1 when not)", cmd_llm_check)
    a.add_argument("spec", metavar="SPEC", help="an LLM spec (auto, embedded, ollama[:MODEL[@HOST]], openai:MODEL@URL)")
    a.add_argument("--timeout", type=POSITIVE_FLOAT, default=10.0, help="seconds to wait for the server")
    a = action("answers", "cached answers per model and step", cmd_llm_answers)
    cache_file_arg(a)
    a = action("failures", "recorded failed calls (newest last)", cmd_llm_failures)
    a.add_argument("--model", default=None, help="only this model (as listed: e.g. llama3.2:3b)")
    a.add_argument("--step", default=None, help="only this step (generation, judgments:binary, judgments:graded, "
                                                 "typology, prefer:judge, prefer:generation, prefer:assignment)")
    a.add_argument("--limit", type=POSITIVE_INT, default=50, help="the newest N")
    cache_file_arg(a)
    a = action("purge", "delete the cached answers of a model and/or step (the next run asks again)", cmd_llm_purge)
    a.add_argument("--model", default=None, help="this model's answers (as listed by `llm answers`)")
    a.add_argument("--step", default=None, help="this step's answers")
    a.add_argument("--backend", default=None, choices=["ollama", "openai", "embedded"], help="only this backend's")
    cache_file_arg(a)
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
