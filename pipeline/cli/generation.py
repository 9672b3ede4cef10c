"""``h2g``: the hard-to-generate sets of one or more generators (BERTScore F1 of zero-shot answers)."""
from __future__ import annotations

from core import cli
from pipeline.cli.args import GENERATOR_HELP, bertscore_args, check_models, collection_args, llm_args
from pipeline.cli.config import study_config
from pipeline.cli.output import print_resolution
from pipeline.sets.rule import SetSummary


def cmd_h2g(args) -> None:
    check_models(args, args.generator, generators=args.generator)
    from pipeline.study.tasks.h2g import h2g_sets
    from pipeline.generation.h2g import reference_note, truncation_note

    config = study_config(args, generators=args.generator)
    data = config.data()
    out = h2g_sets(config, progress=not args.json)
    if args.json:
        cli.print_json(out)
        return
    for name, r in out["generators"].items():
        prov, rule = r["provenance"], SetSummary.from_dict(r["h2g_set"])
        print(f"{data.name} generator {prov.get('label', name)}: {len(r['per_query'])} queries scored, "
              f"{r['n_empty_answers']} empty answers, {r['n_failed_generations']} failed calls; "
              f"H2G {rule.line()}: {' '.join(r['h2g'])}")
        print_resolution("generator", prov)
        print(f"  BERTScore: {r['label']}, {r['aggregate']} over the relevant passages")
        print(f"  {reference_note(r)}")
        print(f"  {truncation_note(r)}" + (f": {' '.join(r['truncated'])}" if r["truncated"] else ""))
        if rule.warning:
            print(f"  warning: ties decide membership: {rule.warning}")


def _h2g_arguments(p) -> None:
    collection_args(p)
    p.add_argument("--generator", required=True, action="append", type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help="repeatable; " + GENERATOR_HELP)
    bertscore_args(p)
    llm_args(p)


COMMANDS = (
    cli.Command("h2g", "hard-to-generate sets: BERTScore F1 of zero-shot answers per query", _h2g_arguments, cmd_h2g),
)
