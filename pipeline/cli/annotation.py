"""``annotations``: human validation of the assigned reasons: sample, CSV import/export, figures."""
from __future__ import annotations

import sys

from core import cli


def cmd_annotations(args) -> None:
    from pipeline.annotation.store import AnnotationStore
    from pipeline.annotation.validation import report

    done = {}  # --json without --report: what was sampled, imported and exported
    with AnnotationStore() as store:
        if args.create_sample:
            from pipeline.annotation.typology_items import sample_items
            from pipeline.typology.store import TypologyStore

            with TypologyStore() as typology:
                items = sample_items(typology, args.run)
            keys = store.create_sample(items, name=args.sample, size=args.size, seed=args.seed,
                                       per_annotator=args.per_annotator)
            done["sample"] = {"name": args.sample, "n_sampled": len(keys), "n_items": len(items)}
            print(f"sample {args.sample!r}: {len(keys)} of {len(items)} items", file=sys.stderr)
        if args.import_csv:
            n = store.import_csv(args.import_csv)
            done["imported"] = {"file": str(args.import_csv), "n_rows": n}
            print(f"imported {n} rows from {args.import_csv}", file=sys.stderr)
        answered = store.answered_queries()
        if args.export_csv:
            store.export_csv(args.export_csv)
            done["exported"] = {"file": str(args.export_csv), "n_rows": answered["rows"],
                                "complete_queries": answered["complete"], "partial_queries": answered["partial"]}
            print(f"exported {answered['rows']} rows to {args.export_csv} ({answered_text(answered)})", file=sys.stderr)
        if args.report:
            figures = {**report(store.export_rows()), "answered_queries": answered}
            if args.json:
                cli.print_json(figures)
            else:
                for line in _report_lines(figures):
                    print(line)
        elif args.json:
            cli.print_json(done)


def _fmt(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def answered_text(answered: dict) -> str:
    """Where the exported rows come from (:meth:`AnnotationStore.answered_queries`), in words."""
    return (f"{answered['complete']} complete queries, {answered['partial']} partial queries counted by their "
            "answered cells")


def _report_lines(figures: dict):
    from pipeline.annotation.validation import EXCLUDED_WORDS

    yield f"{figures['n_rows']} decisions from {len(figures['annotators'])} annotator(s)" + (
        f" ({answered_text(figures['answered_queries'])})" if "answered_queries" in figures else "")
    for answer, n in figures["excluded"].items():
        if n["queries"]:
            yield f"excluded: {n['queries']} queries ({n['decisions']} decisions) with {EXCLUDED_WORDS[answer]}"
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


def _annotations_arguments(p) -> None:
    p.add_argument("--import", dest="import_csv", type=cli.existing_file, metavar="FILE.csv",
                   help="merge annotation rows from a CSV")
    p.add_argument("--export", dest="export_csv", metavar="FILE.csv", help="write the answered cells: complete queries whole, partial queries' answered cells")
    p.add_argument("--report", action="store_true", help="accuracy, precision, recall and kappa with counts")
    p.add_argument("--create-sample", action="store_true", help="draw an annotation sample from typology runs")
    p.add_argument("--run", action="append", default=[], metavar="RUN_ID",
                   help="typology run(s) to sample from (default: the latest finished run per dataset and task)")
    p.add_argument("--sample", default="default", help="sample name")
    p.add_argument("--size", type=cli.positive_int, default=50, help="items in the sample")
    p.add_argument("--seed", type=cli.nonnegative_int, default=0, help="the sample's draw")
    p.add_argument("--per-annotator", action="store_true", help="each annotator gets their own draw")
    cli.json_arg(p, help="print the --report figures as one JSON document (without --report: what was sampled, "
                         "imported and exported)")


COMMANDS = (
    cli.Command("annotations", "human validation of LLM-assigned reasons: CSV and figures",
                _annotations_arguments, cmd_annotations),
)
