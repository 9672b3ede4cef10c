"""``h2g-samples``: how much of H2G is sampling noise, from several samples of one generator
(:mod:`pipeline.study.sampling`)."""
from __future__ import annotations

import sys

from core import cli
from pipeline.cli.args import (GENERATOR_HELP, JUDGE_HELP, bertscore_args, cap_arg, check_models, collection_args,
                               llm_args, universe_arg)
from pipeline.cli.config import study_config
from pipeline.cli.output import model_line
from pipeline.study.sampling import between_line, range_text


def sampling_lines(result: dict):
    """The text output: every figure with the samples, encoder and rule it comes from."""
    hard, within, n = result["hard"], result["jaccard"], len(result["samples"])
    yield (f"{result['dataset']}: {n} samples of {result['generator']} ({result['samples_file']}); "
           f"BERTScore {result['bertscore'].get('label', '')}, {result['bertscore'].get('aggregate', '')} over the "
           f"grade-2/3 passages; H2G the bottom {result['quantile']} of each sample's scored queries")
    yield f"  generator: {model_line(result['provenance'])}"
    yield (f"  hard to generate in every sample: {hard['n_all']} of {hard['n_queries']} queries; in some: "
           f"{hard['n_some']}; in none: {hard['n_none']}")
    yield f"  H2G Jaccard over the {within['n']} pairs of samples: mean {range_text(within)}"
    for other, c in result["compare"].items():
        yield "  " + between_line(other, c, within)
        yield f"    {model_line(c['provenance'])}"
    for label, c in result["configurations"].items():
        d = c["distribution"]
        yield (f"  {label}, H2G redrawn per sample: |H2R ∩ H2G| {range_text(d['h2r&h2g'], '{:.1f}', '{:d}')}, "
               f"|H2G ∩ H2J| {range_text(d['h2g&h2j'], '{:.1f}', '{:d}')}, all three "
               f"{range_text(d['all_three_share'], '{:.1%}')}")
        for other, row in c["generators"].items():
            yield (f"    {other}: |H2R ∩ H2G| {row['h2r&h2g']}, |H2G ∩ H2J| {row['h2g&h2j']}, all three "
                   f"{row['all_three_share']:.1%}")
    yield "  per query (hard in at least one sample): P(H2G), BERTScore mean ± sd (min–max)"
    for qid, q in sorted(result["queries"].items(), key=lambda kv: (-kv[1]["p_hard"], kv[1]["mean"])):
        if q["n_hard"]:
            sd = "—" if q["sd"] is None else f"{q['sd']:.3f}"
            yield (f"    {qid}: {q['n_hard']}/{q['n_samples']} ({q['p_hard']:.0%}), {q['mean']:.3f} ± {sd} "
                   f"({q['min']:.3f}–{q['max']:.3f})")
    yield f"  stored as {result['id'][:12]} ({result['seconds']} s to compute)"


def cmd_h2g_samples(args) -> None:
    check_models(args, [*(args.generator or ()), *(args.judge or ())], generators=args.generator or ())
    from pipeline.study.sampling import sampling_spread

    config = study_config(args, retrievers=args.retriever or (), generators=args.generator or (),
                          judges=args.judge or (), setups=args.setup or ("binary", "graded"))
    result = sampling_spread(config, args.samples, log=lambda m: print(m, file=sys.stderr),
                             reuse=not args.recompute)
    if args.json:
        cli.print_json(result)
        return
    for line in sampling_lines(result):
        print(line)


def _arguments(p) -> None:
    collection_args(p)
    p.add_argument("--samples", required=True, type=cli.named_file, metavar="NAME[=FILE]",
                   help='several answers per query of one generator: JSON lines {"qid", "sample", "text"}; NAME '
                        "alone: the data folder's answers/samples.NAME.<dataset>.jsonl")
    p.add_argument("--retriever", action="append", type=cli.named_file, metavar="NAME[=RUNFILE]",
                   help="repeatable: H2R of the overlap with H2G redrawn per sample (default: the data folder's runs)")
    p.add_argument("--judge", action="append", type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help="repeatable: H2J of the overlap; " + JUDGE_HELP + " (default: the data folder's judgments)")
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="repeatable (default: both)")
    p.add_argument("--generator", action="append", type=cli.named_file, metavar="SPEC|NAME=FILE",
                   help="repeatable: another generator to set against the within-generator spread; " + GENERATOR_HELP
                        + " (default: the data folder's answers files but the samples' own generator's)")
    p.add_argument("--recompute", action="store_true",
                   help="compute again even when a result of the same inputs is stored")
    universe_arg(p)
    cap_arg(p)
    bertscore_args(p)
    llm_args(p)


COMMANDS = (
    cli.Command("h2g-samples", "H2G's sampling noise: per-query H2G probability, Jaccard across samples, the "
                               "overlap with H2G redrawn per sample", _arguments, cmd_h2g_samples),
)
