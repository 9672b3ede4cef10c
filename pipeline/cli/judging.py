"""``h2j``: one judge's hard-to-judge sets (judge/NIST disagreement per query, binary and graded)."""
from __future__ import annotations

from core import cli
from pipeline.cli.args import JUDGE_HELP, cap_arg, check_models, collection_args, llm_args
from pipeline.cli.config import study_config
from pipeline.cli.output import print_resolution
from pipeline.sets.rule import SetSummary


def cmd_h2j(args) -> None:
    check_models(args, [args.judge])
    from pipeline.study.tasks.h2j import h2j_sets

    setups = args.setup or ["binary", "graded"]
    config = study_config(args, judges=[args.judge], setups=setups)
    data = config.data()
    out = h2j_sets(config, progress=not args.json)
    if args.json:
        cli.print_json(out)
        return
    for setup in setups:
        r = out[setup]
        prov, rule = r["provenance"], SetSummary.from_dict(r["h2j_set"])
        print(f"{data.name} {setup} judge {prov.get('label', r['judge'])}: {r['n_queries']} queries, "
              f"{r['n_pairs_compared']} pairs (cap {r['cap'] or 'none'}), {r['n_unparseable']} unparseable; "
              f"H2J {rule.line()}: {' '.join(r['h2j'])}")
        print_resolution("judge", prov)
        if rule.warning:
            print(f"  warning: ties decide membership: {rule.warning}")


def _h2j_arguments(p) -> None:
    collection_args(p)
    p.add_argument("--judge", required=True, type=cli.named_file, metavar="SPEC|NAME[=FILE]", help=JUDGE_HELP)
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="repeatable (default: both)")
    cap_arg(p)
    llm_args(p)


COMMANDS = (
    cli.Command("h2j", "hard-to-judge sets: judge/NIST disagreement per query (binary and graded)",
                _h2j_arguments, cmd_h2j),
)
