"""``overlap``, ``run``, ``studies``: one configuration's three sets and their overlap, a whole stored
study, and the list of stored studies."""
from __future__ import annotations

import json
import sys

from core import cli
from pipeline.cli.args import (GENERATOR_HELP, JUDGE_HELP, bertscore_args, cap_arg, check_models, collection_args,
                               folder_answer_names, llm_args, universe_arg)
from pipeline.cli.config import study_config
from pipeline.cli.output import model_line, print_resolution, resolution_lines
from pipeline.sets.rule import SetSummary
from pipeline.study.universe import UniverseSummary


def cmd_overlap(args) -> None:
    check_models(args, [args.generator, args.judge], generators=[args.generator])
    from pipeline.study.run import failure_sets

    config = study_config(args, retrievers=[args.retriever], generators=[args.generator], judges=[args.judge],
                          setups=[args.setup])
    result = failure_sets(config, progress=not args.json)
    if args.json:
        cli.print_json(result.as_dict())
        return
    for line in _overlap_lines(result):
        print(line)


def _overlap_lines(result):
    """The overlap's text output (of a :class:`pipeline.study.run.FailureSets`): every number with what
    produced it (components, rule, test)."""
    from pipeline.generation.h2g import reference_note, truncation_note

    c, prov, figures, n = result.configuration, result.provenance, result.analysis, len(result.universe)
    gen, judge = prov["generator"], prov["judge"]
    universe = UniverseSummary.from_dict(result.universe_info)
    yield f"{result.dataset}: {n} queries scored by all three tasks; q = {c['quantile']}"
    yield f"  {universe.line()}"
    if universe.warning:
        yield f"  warning: {universe.warning}"
    yield f"  retriever {c['retriever']}: {prov['retriever'].get('provenance', '')}"
    yield (f"  generator {c['generator']}: {gen['provenance'].get('label', '')}; BERTScore {gen['bertscore']['label']} "
           f"({gen['bertscore']['aggregate']} over grade-2/3 passages); {reference_note(gen['bertscore'])}; "
           f"{truncation_note(gen['bertscore'])}")
    yield from resolution_lines("generator", gen["provenance"])
    yield (f"  judge {c['judge']} ({c['setup']}): {judge['provenance'].get('label', '')}; "
           f"{judge['n_pairs_compared']} pairs compared, cap {judge['cap'] or 'none'} per query")
    yield from resolution_lines("judge", judge["provenance"])
    yield f"  rule: {prov['conventions']['quantile']}"
    for task in ("h2r", "h2g", "h2j"):
        rule = SetSummary.from_dict(result.set_info[task])
        yield f"  {task} {rule.line()}: {' '.join(result.sets[task])}"
        if rule.warning:
            yield f"    warning: ties decide membership: {rule.warning}"
    yield f"  all three: {figures['all_three']['count']} ({figures['all_three']['share']:.1%})"
    for pair, fig in figures["pairwise"].items():
        yield (f"  {pair}: {fig['count']} (expected {fig['expected_if_independent']:.2f}, p = {fig['p_value']:.3g}, "
               f"Jaccard {fig['jaccard']:.2f})")
    yield (f"  p: one-sided hypergeometric P(X >= overlap), X ~ Hypergeom(N = {n}, |A|, |B|) "
           f"(scipy.stats), each pair on its own, no multiple-comparison correction")


def cmd_run(args) -> None:
    # no --generator: the data folder's answers (no LLM call), else auto (StudyConfig.with_default_components)
    generators = args.generator or sorted(folder_answer_names(args)) or ["auto"]
    check_models(args, [*generators, *(args.judge or ["auto"])], generators=args.generator or ())
    from pipeline.study.config import SETUPS
    from pipeline.study.run import run_study

    config = study_config(args, retrievers=args.retriever or (), generators=args.generator or (),
                          judges=args.judge or (), setups=args.setup or SETUPS).with_default_components()
    study = run_study(config, log=(lambda m: print(m, file=sys.stderr)), study_id=args.study_id,
                      progress_key=args.study_id)
    if args.out:
        from core.atomic import atomic_write_text
        atomic_write_text(args.out, json.dumps(study.to_dict(), ensure_ascii=False, indent=1))
    if args.json:
        cli.print_json(study.to_dict())
        return
    for name, g in study.generators.items():
        from pipeline.generation.h2g import truncation_note

        print(f"generator {name}: {model_line(g.provenance)}; BERTScore {g.bertscore['label']}; "
              f"{truncation_note(g.bertscore)}")
        print_resolution("generator", g.provenance)
    for name, per_setup in study.judges.items():
        prov = next(iter(per_setup.values())).provenance
        print(f"judge {name}: {model_line(prov)}")
        print_resolution("judge", prov)
    for label, c in study.configurations.items():
        a = c.analysis  # pipeline.sets.overlap.overlap_analysis's figures
        largest = a["largest_pairwise"]
        print(f"{label}: all three {a['all_three']['share']:.1%}; exclusive "
              + ", ".join(f"{t} {e['share']:.0%}" if e["share"] is not None else f"{t} — (empty set)"
                          for t, e in a["exclusive"].items())
              + f"; largest pair {largest['pair']} ({largest['count']}, p = {largest['p_value']:.3g})"
              + (f"  [{c.note}]" if c.note else ""))
        universe = study.universe_summary(label)
        print(f"  {universe.line()}")
        if universe.warning:
            print(f"  warning: {universe.warning}")
        for rule in c.hard_in_universe_rule.values():
            if rule.warning:
                print(f"  warning: ties decide membership: {rule.warning}")


def cmd_studies(args) -> None:
    from pipeline.study import store as studies

    if args.delete:
        path = studies.delete_study(args.dataset, args.delete)
        print(f"deleted study {args.delete} ({path})", file=sys.stderr)
    listed = studies.list_studies(args.dataset, args.data)
    if args.json:
        fields = ("id", "configuration", "time", "finished", "n_configurations", "path", "components")
        cli.print_json({"dataset": args.dataset, "studies": [{**{k: s[k] for k in fields},
                                                              "settings": studies.settings_line(s),
                                                              "description": studies.describe(s)} for s in listed]})
        return
    if not listed:
        print(f"{args.dataset}: no stored study")
    for s in listed:
        print(studies.describe(s))


def _overlap_arguments(p) -> None:
    collection_args(p)
    p.add_argument("--retriever", required=True, type=cli.named_file, metavar="NAME[=RUNFILE]")
    p.add_argument("--generator", required=True, type=cli.named_file, metavar="SPEC|NAME[=FILE]", help=GENERATOR_HELP)
    p.add_argument("--judge", required=True, type=cli.named_file, metavar="SPEC|NAME[=FILE]", help=JUDGE_HELP)
    p.add_argument("--setup", required=True, choices=["binary", "graded"])
    universe_arg(p)
    cap_arg(p)
    bertscore_args(p)
    llm_args(p)


def _run_arguments(p) -> None:
    collection_args(p)
    p.add_argument("--retriever", action="append", type=cli.named_file, metavar="NAME[=RUNFILE]",
                   help="repeatable (default: the data folder's imported runs)")
    p.add_argument("--generator", action="append", type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help="repeatable; " + GENERATOR_HELP + " (default: the data folder's answers files, else auto)")
    p.add_argument("--judge", action="append", type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help="repeatable; " + JUDGE_HELP + " (default: the data folder's judgment files and auto)")
    p.add_argument("--setup", action="append", choices=["binary", "graded"], help="repeatable (default: both)")
    p.add_argument("--out", default=None, help="also write the study JSON here")
    p.add_argument("--max-queries", type=cli.positive_int, default=None,
                   help="only the first N judged queries in topic order (recorded with the study)")
    p.add_argument("--study-id", default=None, help="store the study under this id (the dashboard's jobs pass "
                                                    "one, so that their row links to it); default: a new id")
    universe_arg(p)
    cap_arg(p)
    bertscore_args(p)
    llm_args(p)


def _studies_arguments(p) -> None:
    p.add_argument("--dataset", required=True, help="dl19..dl22, or a --qrels collection's name")
    p.add_argument("--data", default=None, help="only the studies computed from this data folder")
    p.add_argument("--delete", default=None, metavar="ID", help="delete this study for good")
    p.add_argument("--json", action="store_true",
                   help='{"dataset", "studies": [{"id", "configuration", "time", ...}]}')


COMMANDS = (
    cli.Command("overlap", "the three failure sets of one configuration and their overlap",
                _overlap_arguments, cmd_overlap),
    cli.Command("run", "every failure-study step and every configuration's overlap (resumable)",
                _run_arguments, cmd_run),
    cli.Command("studies", "the stored failure studies of a dataset (newest first); delete one",
                _studies_arguments, cmd_studies),
)
