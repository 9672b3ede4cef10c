"""``predict``: query-performance predictors and how well they foresee each task's failure
(:func:`pipeline.predict.compute.predict`); every result is stored for the Predicting failure page."""
from __future__ import annotations

from core import cli
from pipeline.cli.args import (GENERATOR_HELP, JUDGE_HELP, bertscore_args, cap_arg, check_models, collection_args,
                               llm_args, llm_options)

# The flags' minimums, so a value that cannot give its figure is refused at parsing (exit 2, naming it):
# sd@k, NQC@k, SMV@k and sigma_max@k are spreads of the top k scores, and a spread needs two of them;
# a 95% percentile interval takes its bounds at the 2.5% and 97.5% quantiles of the resamples, which
# needs at least 1/0.025 = 40 resamples for each tail to hold one (with 1 resample the "interval" is
# that one resample's value twice, a zero-width range that need not contain the estimate).
MIN_K = 2
MIN_BOOTSTRAP = 40
DEPTH = cli.number(int, MIN_K, what=f"an integer >= {MIN_K}")
RESAMPLES = cli.number(int, MIN_BOOTSTRAP, what=f"an integer >= {MIN_BOOTSTRAP}")

RETRIEVER_HELP = "NAME (the data folder's run, or computed), NAME@computed, or NAME=RUNFILE (an imported run)"


def collections(args) -> list:
    """The ``--dataset`` collections (several) or the one ``--qrels`` collection."""
    from pipeline.study.config import load_collection

    if args.qrels is not None or not args.dataset:
        return [load_collection(args.dataset[0] if args.dataset else None, qrels=args.qrels, topics=args.topics,
                                passages=args.passages, data_dir=args.data)]
    named_files = [a for a in [*args.retriever, *args.generator, *args.judge] if "=" in a]
    if len(args.dataset) > 1 and named_files:
        raise ValueError(f"{named_files[0]!r} names a file of one dataset: give one --dataset with NAME=FILE")
    return [load_collection(d, data_dir=args.data) for d in dict.fromkeys(args.dataset)]


def _ci(interval, fmt="+.2f") -> str:
    return "" if not interval else f" [{interval[0]:{fmt}}, {interval[1]:{fmt}}]"


def _num(value, fmt="+.3f") -> str:
    return "  --  " if value is None else format(value, fmt)


def cmd_predict(args) -> None:
    check_models(args, [*args.generator, *args.judge], generators=args.generator)
    from pipeline.predict import store
    from pipeline.predict.ceiling import ceiling_text
    from pipeline.predict.compute import predict
    from pipeline.predict.evaluation import AUC_NOTE, GATED, SMARE_NOTE, beside_lines

    result = predict(collections(args), retrievers=args.retriever, generators=args.generator, judges=args.judge,
                     setups=args.setup or ["binary"], k=args.k, wig_k=args.wig_k, quantile=args.quantile,
                     index=args.index, target_measures=args.target_measure or ["nDCG@10"],
                     pool_in_verdicts=args.pool_in_verdicts, n_boot=args.bootstrap, seed=args.bootstrap_seed, cap=args.cap,
                     bertscore={"encoder": args.encoder, "aggregate": args.aggregate,
                                "partial_references": args.partial_references, "truncated": args.truncated_answers},
                     llm_options=llm_options(args), progress=not args.json)
    document = result.as_dict()
    result_id, path = store.save(document)
    if args.json:
        cli.print_json({"id": result_id, "path": str(path), **document})
        return
    for dataset, info in document["provenance"]["index"].items():
        print(f"{dataset} index statistics: {info['description']}")
    if document["pool"]:
        print(f"{document['pool_note']}; rows marked 'pool' below")
    for dataset, runs in document["provenance"]["runs"].items():
        for run in runs:
            print(f"{dataset} {run['name']}: corpus score: {run['corpus_score']}")
    for dataset, named in document["targets"].items():
        for name, target in named.items():
            if target.get("relevance"):
                print(f"{dataset} target {name}: {target['measure']} ({target['relevance']})")
    for absent in document["absent"]:
        print(f"not computed: {absent['name']}: {absent['reason']}")
    print(f"{AUC_NOTE}; {SMARE_NOTE}; τ, AUC and sMARE with 95% bootstrap intervals ({args.bootstrap} resamples, "
          f"seed {args.bootstrap_seed}); * Holm-corrected p < 0.05 across the table; 'pool': the value reads a "
          f"pool-built index")
    for row in result.rows:
        mark = "*" if row.kendall_p_holm is not None and row.kendall_p_holm < 0.05 else " "
        verdict, reason = row.verdict_reason(args.pool_in_verdicts)
        print(f"{row.dataset:6} {row.predictor:32}{' pool' if row.pool else '     '} {row.target:40} n={row.n:<4} "
              f"τ={_num(row.kendall_tau)}{_ci(row.intervals.get('kendall_tau'))}{mark} AUC={_num(row.auc, '.3f')}"
              f"{_ci(row.intervals.get('auc'), '.2f')} sMARE={_num(row.smare, '.3f')}"
              f"{_ci(row.intervals.get('smare'), '.3f')}  {verdict}"
              f"{'  (' + reason + ')' if verdict == GATED or reason.startswith('n = ') else ''}"
              f"{'  ' + row.note if row.note and row.kendall_tau is None else ''}")
    for line in beside_lines(document):
        print(line)
    for dataset, named in document["h2g_ceiling"].items():
        for target, found in named.items():
            print(ceiling_text(target, found))
    if result.k_sweep:
        print(f"{document['k_sweep']['note']}:")
        by_line: dict = {}
        for entry in result.k_sweep:
            name = f"{entry['predictor']}[{entry['component']}]" + (" pool" if entry.get("pool") else "")
            by_line.setdefault((entry["dataset"], name, entry["target"]), []).append(
                f"k={entry['k']}: {_num(entry['kendall_tau'], '+.2f')}{_ci(entry.get('tau_interval'))}")
        for (dataset, predictor, target), cells in by_line.items():
            print(f"  {dataset:6} {predictor:32} {target:28} {'  '.join(cells)}")
    print(f"stored as {result_id} ({path}); the Predicting failure page shows it")


def _arguments(p) -> None:
    collection_args(p, many=True)
    p.add_argument("--retriever", action="append", default=[], type=cli.named_file, metavar="NAME[=RUNFILE]",
                   help=RETRIEVER_HELP + "; repeatable: post-retrieval predictors and the nDCG@10 target")
    p.add_argument("--generator", action="append", default=[], type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help=GENERATOR_HELP + "; repeatable: the BERTScore F1 target (and, with log-probabilities, "
                                         "the answer's mean token log-probability)")
    p.add_argument("--judge", action="append", default=[], type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help=JUDGE_HELP + "; repeatable: the disagreement target (and, with expected grades, their spread)")
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="judging setups (default: binary)")
    p.add_argument("--target-measure", action="append", default=[], metavar="MEASURE",
                   help="retrieval target(s) as ir_measures measures, repeatable (default nDCG@10), e.g. AP(rel=2)@100, "
                        "RR(rel=2)@10, R(rel=2)@100; a binary measure is named with its relevance level")
    p.add_argument("--pool-in-verdicts", action="store_true",
                   help="let predictors read from a pool-built index (the data folder's passages) carry a "
                        "'foresees' verdict (default: left out, their statistics are conditioned on these queries)")
    p.add_argument("--k", type=DEPTH, default=100, help="cut-off of sd@k, NQC@k, SMV@k and sigma_max@k (at least "
                                                         f"{MIN_K}: a standard deviation needs two scores)")
    p.add_argument("--wig-k", type=cli.positive_int, default=5, help="cut-off of WIG@k")
    p.add_argument("--index", default=None, metavar="PATH|prebuilt:NAME",
                   help="full-corpus Lucene index for the pre-retrieval statistics (default: [qpp_index] in "
                        "irdash.toml, else the data folder's passages, marked partial)")
    p.add_argument("--bootstrap", type=RESAMPLES, default=1000,
                   help=f"bootstrap resamples for the 95%% intervals (at least {MIN_BOOTSTRAP}: each 2.5%% tail must "
                        f"hold a resample)")
    p.add_argument("--bootstrap-seed", type=cli.nonnegative_int, default=0, help="seed of the bootstrap")
    bertscore_args(p)
    cap_arg(p)
    llm_args(p)


COMMANDS = (
    cli.Command("predict", "query-performance predictors (pre-retrieval, post-retrieval, LLM log-probabilities) "
                           "against each task's per-query values: tau, r, AUC of the hard set, bootstrap intervals",
                _arguments, cmd_predict),
)
