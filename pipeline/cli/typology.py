"""``typology``: an LLM-induced failure typology of one task's hard queries, reasons assigned per query."""
from __future__ import annotations

import sys

from core import cli
from pipeline.cli.args import (bertscore_args, cap_arg, check_models, collection_args, llm_args, llm_options,
                               progress_key_arg, universe_arg)
from pipeline.cli.output import print_resolution


def cmd_typology(args) -> None:
    from tqdm import tqdm

    from core.jobs.progress import ProgressWriter
    from pipeline.llm import make_client
    from pipeline.typology.categories import resolve_typology
    from pipeline.typology.induction import InductionConfig
    from pipeline.typology.runner import run_typology, typology_stages
    from pipeline.study.typology_sources import HardSetConfig, hard_queries
    from pipeline.typology.store import TypologyStore

    # the assigner (and a generator spec) checked before the hard set is computed: a malformed spec exits 2 at once
    check_models(args, [], generators=[args.assigner, *([args.generator] if args.generator else [])])
    hard_config = HardSetConfig(dataset=args.dataset, task=args.task, retriever=args.retriever,
                                generator=args.generator, judge=args.judge, setup=args.setup,
                                quantile=args.quantile, data=args.data, qrels=args.qrels, topics=args.topics,
                                passages=args.passages, cap=args.cap, encoder=args.encoder,
                                aggregate=args.aggregate, partial_references=args.partial_references,
                                universe=args.universe, truncated_answers=args.truncated_answers,
                                max_queries=args.max_queries)
    config = InductionConfig(batch_size=args.batch_size, max_rounds=args.max_rounds,
                             max_categories=args.max_categories, seed=args.seed or 0)
    imported = resolve_typology(args.typology, args.task) if args.typology else None
    # the job's progress record: the hard set (which may generate or judge first), then the run's stages
    with ProgressWriter(args.progress_key, 1 + typology_stages(config, bool(imported))) as tracker:
        tracker.stage(f"{args.task.upper()} hard set of the configuration")
        dataset, queries, hard_set = hard_queries(hard_config, llm_options=llm_options(args))
        client = make_client(args.assigner, **llm_options(args, step="typology"))
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
        cli.print_json(result)
        return
    print(f"{result['run_id']}: {result['typology']} -- {result['model']['label']}")
    print_resolution("assigner", result["model"])
    # what the set was drawn from: the task's own component under the per-task universe, all three under common
    print("set drawn from: " + ", ".join(f"{k} {v}" for k, v in hard_set["configuration"].items()))
    print(f"{result['n_queries']} hard queries ({hard_set['n_hard']} in the set); "
          f"{result['n_rounds']} round(s), stop: {result['stop_reason'] or 'imported'}")
    if (hard_set.get("set") or {}).get("warning"):
        print(f"warning: ties decide membership: {hard_set['set']['warning']}")
    for line in assignment_lines(result):
        print(line)


def assignment_lines(result: dict) -> list[str]:
    """The text form of a run's assignment (:meth:`pipeline.typology.store.TypologyStore.result`): the
    categories with their counts, what could not be read (excluded, counted) and a degenerate
    assignment's warning."""
    lines = [f"  {cat['n_queries']:3d}  {cat['name']}: {cat['description']}" for cat in result["categories"]]
    lines.append(f"unparseable assignments: {result['n_unparseable']}, failed calls: {result['n_failed']}, "
                 f"assignments naming categories outside the typology: {result['n_unknown_category']} "
                 "(each left out of the validation figures)")
    if result["unknown_categories"]:
        lines.append("  outside the typology (kept, never read as 'no reason applies'): "
                     + "; ".join(f"{c['name']!r} ({c['n_queries']})" for c in result["unknown_categories"]))
    if result.get("degenerate"):
        lines.append(f"warning: {result['degenerate']}: its agreement with annotators gives no verdict")
    return lines


def _typology_arguments(p) -> None:
    collection_args(p)
    p.add_argument("--task", required=True, choices=["h2r", "h2g", "h2j"])
    p.add_argument("--assigner", default="auto", metavar="SPEC",
                   help="the model that induces the typology and assigns reasons (an LLM spec)")
    p.add_argument("--retriever", default="bm25", type=cli.named_file, metavar="NAME[=RUNFILE]",
                   help="the configuration's retriever")
    p.add_argument("--generator", default="embedded", type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help="the configuration's generator (whose answers define H2G)")
    p.add_argument("--judge", default="llama-3.3-70b", type=cli.named_file, metavar="SPEC|NAME[=FILE]",
                   help="the configuration's judge")
    p.add_argument("--setup", default="binary", choices=["binary", "graded"], help="the configuration's judging setup")
    p.add_argument("--typology", default=None, metavar="study|FILE.json",
                   help="import this typology instead of inducing one ('study': the study's ten categories)")
    p.add_argument("--max-rounds", type=cli.positive_int, default=6)
    p.add_argument("--batch-size", type=cli.positive_int, default=8, help="reasons shown per refinement round")
    p.add_argument("--max-categories", type=cli.positive_int, default=8)
    p.add_argument("--max-queries", type=cli.positive_int, default=None, help="keep the N hardest queries (recorded)")
    p.add_argument("--force", action="store_true", help="recompute a finished run (the cache still answers)")
    progress_key_arg(p)
    cap_arg(p)
    bertscore_args(p)
    universe_arg(p)
    llm_args(p)


COMMANDS = (
    cli.Command("typology", "LLM-induced failure typology of one task's hard queries",
                _typology_arguments, cmd_typology),
)
