"""``aware-retrieve``: BM25 on queries rewritten from their H2R failure reason, against a same-length neutral
control rewrite (the primary comparison), a plain rewrite, RM3 and the original query
(:mod:`pipeline.aware.retrieve`); ``--list`` the stored results."""
from __future__ import annotations

import textwrap

from pipeline.prompting import difficulty  # light: its shipped data files are the command's defaults
from core import cli
from pipeline.cli.args import check_reasons_args, llm_args, llm_options, progress_key_arg, reasons_args
from pipeline.data.datasets import DATASETS

# the job's progress record: the index and the original queries' H2R, (assigning reasons,) rewriting, retrieval
# per arm
STAGES = 3


def cmd_aware_retrieve(args) -> None:
    if args.list:
        return _list(args)
    missing = [flag for flag, value in (("--dataset", args.dataset), ("--rewriter", args.rewriter)) if not value]
    if missing:
        raise cli.InputError(f"aware-retrieve: {' and '.join(missing)} required (or --list for the stored results)")
    check_reasons_args(args)
    from core.jobs.progress import ProgressWriter
    from pipeline.aware import retrieve, store
    from pipeline.data.datasets import load_dataset
    from pipeline.llm import make_client
    from pipeline.retrieval import bm25

    templates = difficulty.load_templates(args.templates)
    config = retrieve.RetrieveConfig(quantile=args.quantile, max_queries=args.max_queries)
    data = load_dataset(args.dataset, args.data)
    data.require_qrels()
    reasons = None
    if args.reasons:  # read before any model or index: a bad file is refused with nothing started
        try:
            reasons = retrieve.h2r_reasons(data, (), args.typology, reasons=args.reasons,
                                           reasons_model=args.reasons_model, stated=args.model_size)
        except (ValueError, OSError) as exc:
            raise cli.InputError(f"--reasons {args.reasons}: {exc}") from None
        if not reasons[1]:
            raise cli.InputError(f"--reasons {args.reasons}: no H2R reason in it (task 'h2r'): nothing to rewrite from")
    llm = llm_options(args)
    with ProgressWriter(args.progress_key, STAGES + (0 if reasons else 1)) as tracker:
        rewriter = make_client(args.rewriter, **llm, step="aware-retrieve:rewrite")
        assigner = None
        if reasons is None:
            assigner = make_client(args.assigner, **llm, step="aware-retrieve:assignment") if args.assigner \
                else rewriter
        # a first build of the index (the JVM, every passage) takes a while: the jobs table says so
        tracker.stage("the BM25 index and the original queries' nDCG@10 (H2R)", 2, "step")
        index = bm25.build_index(data.passages, fingerprint=data.passages_fingerprint)
        tracker.advance()
        h2r = retrieve.original_h2r(data, index, config)
        tracker.advance()
        if reasons is None:
            reasons = retrieve.h2r_reasons(data, h2r[2].qids, args.typology, assigner=assigner,
                                           max_queries=args.max_queries, progress=tracker)
        typology, assignments, how = reasons
        result = retrieve.run_aware_retrieve(data, h2r, assignments, typology, templates, rewriter, config, index,
                                             assigner=assigner.provenance if assigner else None,
                                             reasons_report=how, progress=tracker)
        if not result["queries"]:
            raise ValueError(f"{data.name}: none of the {result['counts']['h2r']} H2R queries has an H2R reason "
                             f"({'--reasons ' + args.reasons if args.reasons else 'the assigner named none'}): "
                             f"nothing to compare, nothing stored")
        path = store.save_result(retrieve.KIND, result)
    out = summary(result) | {"path": str(path)}
    if args.json:
        cli.print_json(out)
        return
    _print(out)


def summary(result: dict) -> dict:
    """The command's JSON (and ``--list``'s entry): the headline figures of a stored result."""
    return {"dataset": result["dataset"], "id": result["id"], "kind": result["kind"], "primary": result["primary"],
            "selection_note": result["selection_note"], "family": result["family"],
            "corpus": result["corpus"]["statement"], "partial_corpus": result["corpus"]["partial_corpus"],
            "rewriter": result["rewriter"]["label"],
            "assigner": result["assigner"]["label"] if result["assigner"] else None,
            "reasons": result["reasons_report"], "counts": result["counts"],
            "h2r": {"qids": result["h2r"]["qids"], "boundary": result["h2r"]["boundary"],
                    "quantile": result["h2r"]["quantile"]},
            "means": result["means"], "holm": result["holm"],
            "verdicts": {name: {"verdict": v["verdict"], "headline": v["headline"]}
                         for name, v in result["verdicts"].items()},
            "leaving": result["leaving"], "leaving_tests": result["leaving_tests"], "leave_rule": result["leave_rule"],
            "not_a_finding": [g for gates in result["gates"].values() for g in gates], "rule": result["rule"]}


def _print(out: dict) -> None:
    counts = out["counts"]
    print(f"{out['dataset']}: rewriter {out['rewriter']}" + (f"; reasons assigned by {out['assigner']}"
                                                              if out["assigner"] else ""))
    print(f"  {out['corpus']}")
    excluded = ", ".join(f"{n} {why}" for why, n in counts["excluded"].items() if n) or "none excluded"
    print(f"  H2R: {counts['used']} of {counts['h2r']} H2R queries used ({excluded}); boundary nDCG@10 "
          f"{out['h2r']['boundary']:.4f}")
    print("  mean nDCG@10: " + ", ".join(f"{arm} {m:.4f}" for arm, m in out["means"].items() if m is not None))
    kept = counts["kept_original"]
    print(f"  kept the original query (failed or unusable reply): plain {kept['plain_rewrite']}, "
          f"aware {kept['aware_rewrite']}, control {kept['control_rewrite']}")
    print(textwrap.fill(f"primary comparison (declared; read first): {out['primary']}. Why: {out['selection_note']}",
                        100, initial_indent="  ", subsequent_indent="    "))
    print(f"  {out['primary']}: {out['verdicts'][out['primary']]['headline']}")
    print(f"  secondary comparisons (Holm across the declared family of {len(out['family'])}, the primary "
          "one included):")
    for name, v in out["verdicts"].items():
        if name != out["primary"]:
            print(f"  {name}: {v['headline']}")
    for arm, s in out["leaving"].items():
        share = "n/a" if s["share"] is None else \
            f"{s['share']:.1%} [{s['interval'][0]:.1%}, {s['interval'][1]:.1%}]"
        print(f"  leaves the bottom quartile under {arm}: {s['left']}/{s['n']} = {share}")
    for name, t in out["leaving_tests"].items():
        p = "no discordant query" if t["p"] is None else f"p = {t['p']:.3g}"
        print(f"  leaving, {name}: {t['first_only']} left under the first only, {t['second_only']} under the "
              f"second only ({t['method']}: {p})")
    for gate in out["not_a_finding"]:
        print(f"  not a finding: {gate}")
    print(f"stored: {out['path']}")


def _list(args) -> None:
    from pipeline.aware import retrieve, store

    rows = []
    for path in store.list_results(retrieve.KIND, args.dataset):
        result = store.load_result(retrieve.KIND, path, retrieve.RESULT_VERSION)
        rows.append(summary(result) | {"path": str(path)})
    if args.json:
        cli.print_json({"results": rows})
        return
    if not rows:
        print(f"no stored aware-retrieve results{' for ' + args.dataset if args.dataset else ''}")
    for row in rows:
        means = ", ".join(f"{arm} {m:.3f}" for arm, m in row["means"].items() if m is not None)
        partial = " · partial corpus" if row["partial_corpus"] else ""
        print(f"{row['id']}  {row['dataset']}  {row['rewriter']}  {row['counts']['used']} queries  {means}{partial}")


def _arguments(p) -> None:
    p.add_argument("--dataset", default=None, choices=list(DATASETS))
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--rewriter", default=None, metavar="SPEC",
                   help="the model that rewrites the queries, plain and difficulty-aware (an LLM spec)")
    reasons_args(p, "h2r", "this BM25's H2R queries", "the rewriter")
    p.add_argument("--quantile", type=cli.quantile, default=0.25,
                   help="H2R: the bottom q of the original queries' nDCG@10 under this BM25")
    p.add_argument("--max-queries", type=cli.positive_int, default=None,
                   help="first N H2R queries with a reason, in topic order (recorded)")
    p.add_argument("--list", action="store_true", help="list the stored results (of --dataset, else all)")
    progress_key_arg(p)
    cli.json_arg(p)
    llm_args(p)


COMMANDS = (
    cli.Command("aware-retrieve", "difficulty-aware query rewriting for BM25 vs a same-length neutral control rewrite "
                                  "(primary), a plain rewrite, RM3 and the original",
                _arguments, cmd_aware_retrieve),
)
