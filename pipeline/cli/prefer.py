"""``prefer``: difficulty-aware vs baseline answers, judged pairwise in both orders."""
from __future__ import annotations

from pipeline.prompting import difficulty  # light: its shipped data files are the command's defaults
from core import cli
from pipeline.cli.args import llm_args, llm_options, progress_key_arg
from pipeline.data.datasets import DATASETS
from pipeline.typology.categories import STUDY_FILE


def cmd_prefer(args) -> None:
    from dataclasses import replace

    from core.jobs.progress import ProgressWriter
    from pipeline.findings.preference import paper_rates
    from pipeline.prompting import preference
    from pipeline.data.datasets import load_dataset
    from pipeline.generation.answers import GENERATION_OPTIONS, read_answers_jsonl
    from pipeline.llm import make_client
    from pipeline.study.preference_reasons import preference_reasons

    # the decoding options given on the command line go into the recorded configuration (both roles)
    llm = llm_options(args)
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
        self_judging = preference.is_self_judging(judge, generator)
        if self_judging and not args.allow_self_judging:
            raise ValueError(f"prefer: the judge and the generator are the same model ({judge.provenance.label}): it "
                             f"would judge its own answers; choose another --judge or --generator, or pass "
                             f"--allow-self-judging (the result then says so)")
        data = load_dataset(args.dataset, args.data)
        data.require_qrels()
        templates = difficulty.load_templates(args.templates)
        typology, assignments, report = preference_reasons(
            data, args.typology, reasons=args.reasons, reasons_model=args.reasons_model, retriever=args.retriever,
            quantile=args.quantile, max_queries=args.max_queries, assigner=args.assigner or args.judge,
            llm_options=llm_options(args), tasks=args.task, progress=tracker)

        def side(file):
            if file:
                return preference.AnswerSide(imported=read_answers_jsonl(file, data.topics),
                                             imported_from=str(file), stated_sizes=args.model_size)
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
           "study_rate": paper_rates().get(data.name), **result["summary"]}
    if args.json:
        cli.print_json(out)
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


def _prefer_arguments(p) -> None:
    p.add_argument("--dataset", required=True, choices=list(DATASETS))
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--reasons", default=None, metavar="typology|FILE",
                   help="'typology': each task's latest finished failure-typology run of the dataset (its "
                        'categories and assigned reasons); FILE: a JSON list or JSONL of {"qid", "task", '
                        '"categories": [...]}; default: --assigner assigns the typology\'s H2R categories '
                        "to the H2R queries of --retriever")
    p.add_argument("--reasons-model", default=None, metavar="LABEL",
                   help="with --reasons typology: use the runs of this model (a run's model label, e.g. "
                        "ollama:qwen3:8b); default: the model of the dataset's newest finished run; with --reasons "
                        "FILE: the model that made the file, its size stated with --model-size LABEL=SIZE (a FILE's "
                        "maker is otherwise of unknown size: no finding)")
    p.add_argument("--typology", type=cli.existing_file, default=str(STUDY_FILE), metavar="FILE",
                   help="typology JSON (default: the study's ten categories)")
    p.add_argument("--templates", type=cli.existing_file, default=str(difficulty.DEFAULT_TEMPLATES), metavar="FILE",
                   help="difficulty sentence templates JSON (default: the shipped ones)")
    p.add_argument("--all-reasons", action="store_true", help="one sentence per assigned reason (default: first)")
    p.add_argument("--task", action="append", choices=["h2r", "h2g", "h2j"], help="only these tasks (repeatable)")
    p.add_argument("--generator", default="auto", metavar="SPEC",
                   help="the model that writes the baseline and difficulty-aware answers (an LLM spec)")
    p.add_argument("--baseline-answers", type=cli.existing_file, default=None, metavar="FILE.jsonl",
                   help='imported {"qid", "text"} answers')
    p.add_argument("--aware-answers", type=cli.existing_file, default=None, metavar="FILE.jsonl",
                   help='imported {"qid", "text"} difficulty-aware answers')
    p.add_argument("--judge", default="auto", metavar="SPEC", help="the pairwise judge (an LLM spec)")
    p.add_argument("--allow-self-judging", action="store_true",
                   help="let the judge be the generator's model (refused otherwise; the result then says so)")
    p.add_argument("--assigner", default=None, metavar="SPEC",
                   help="the model that assigns failure reasons (default: the judge)")
    p.add_argument("--retriever", default="bm25", help="H2R retriever when assigning reasons here")
    p.add_argument("--quantile", type=cli.quantile, default=0.25, help="H2R: the bottom q of the queries")
    p.add_argument("--max-queries", type=cli.positive_int, default=None, help="first N judgeable queries (recorded)")
    p.add_argument("--max-passages", type=cli.positive_int, default=3,
                   help="highly relevant passages shown to the judge")
    p.add_argument("--passage-chars", type=cli.number(int, 50, what="an integer >= 50"), default=600,
                   help="each passage truncated to this many characters")
    progress_key_arg(p)
    cli.json_arg(p)
    llm_args(p)


COMMANDS = (
    cli.Command("prefer", "difficulty-aware vs baseline generation, judged pairwise in both orders",
                _prefer_arguments, cmd_prefer),
)
