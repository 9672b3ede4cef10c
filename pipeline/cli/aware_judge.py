"""``aware-judge``: difficulty-aware judging (:mod:`pipeline.aware.judge`): the judge re-judges the H2J
queries' pairs with a difficulty sentence, a control sentence, and on control queries; ``--list`` the stored
results."""
from __future__ import annotations

import textwrap

from core import cli
from pipeline.cli.args import _cap, check_reasons_args, llm_args, llm_options, progress_key_arg, reasons_args
from pipeline.data.datasets import DATASETS
from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.prompting import difficulty  # light: its shipped data files are the command's defaults


def _summary(result: dict, path) -> dict:
    """What ``--json`` prints: the comparisons and verdicts in full, the per-query records by reference."""
    return {"dataset": result["dataset"], "id": result["id"], "path": str(path),
            "primary": result["primary"], "selection_note": result["selection_note"], "family": result["family"],
            "judge": result["judge"]["label"],
            "assigner": (result["assigner"] or {}).get("label"), "config": result["config"],
            "reasons": {k: v for k, v in result["reasons"]["how"].items() if k != "report"},
            "universe": len(result["universe"]), "excluded": {k: len(v) for k, v in result["excluded"].items()},
            "sets": {s: {"hard": v["hard"], "hard_used": v["hard_used"], "control": v["control"],
                         "summary": v["summary"]} for s, v in result["sets"].items()},
            "controls": {"seed": result["controls"]["seed"], "borrowed": result["controls"]["borrowed"]},
            "interaction": result["interaction"], "comparisons": result["comparisons"],
            "verdicts": result["verdicts"], "gates": result["gates"],
            "counts": result["counts"], "rule": result["rule"], "seconds": result["seconds"]}


def _is_primary(part: dict, out: dict) -> bool:
    """The primary comparison's and the interaction's verdicts (of any setup)."""
    from pipeline.aware.judge import INTERACTION

    return part["scope"].split(" · ", 1)[-1] in (out["primary"], INTERACTION)


def _print_part(part: dict) -> None:
    kappa = part["measured"].get("kappa")  # the interaction has none
    because = part["evidence"].get("inconclusive_because") or []
    verdict = part["verdict"] + (f" ({because[0]})" if part["verdict"] == "inconclusive" and because else
                                 f" ({part['reason']})" if part["reason"].startswith(("no effect", "an effect")) else "")
    change = "" if kappa is None else " · κ change " + (
        "undefined" if kappa["change"] is None else f"{kappa['change']:+.3f}") + f" ({kappa['scale']})"
    print(f"  {part['scope']}: {verdict} · n = {part['evidence']['n']} · {part['evidence']['shown']}{change}")


def _list(args) -> None:
    from pipeline.aware import judge, store

    rows = []
    for path in store.list_results(judge.KIND, args.dataset):
        try:
            r = store.load_result(judge.KIND, path, judge.RESULT_VERSION)
        except ValueError as exc:
            rows.append({"path": str(path), "error": str(exc)})
            continue
        rows.append({"id": r["id"], "dataset": r["dataset"], "path": str(path), "judge": r["judge"]["label"],
                     "queries": len(r["queries"]), "config": r["config"], "gates": r["gates"]})
    if args.json:
        cli.print_json({"results": rows})
        return
    if not rows:
        print("no aware-judge result stored" + (f" for {args.dataset}" if args.dataset else ""))
    for row in rows:
        print(row.get("error") or f"{row['id']}  {row['judge']}  {row['queries']} queries  {row['path']}")


def cmd_aware_judge(args) -> None:
    if args.list:
        return _list(args)
    if not args.dataset:
        raise cli.InputError("--dataset is required (or --list)")
    check_reasons_args(args)
    from core.jobs.progress import ProgressWriter
    from pipeline.aware import judge as study, store
    from pipeline.data.datasets import load_dataset
    from pipeline.llm import make_client
    from pipeline.typology.categories import load_typology

    config = study.AwareJudgeConfig(cap=args.cap, quantile=args.quantile, max_queries=args.max_queries,
                                    control_seed=args.control_seed)
    # every input is read before the first call: a bad file stops the command with nothing judged or stored
    data = load_dataset(args.dataset, args.data)
    data.require_qrels()
    templates = difficulty.load_templates(args.templates)
    if args.reasons:
        typology, assignments, report = difficulty.given_reasons(data.name, args.reasons, args.typology,
                                                                 args.reasons_model, args.model_size)
    else:
        typology, assignments, report = load_typology(args.typology), None, None
    options = llm_options(args)
    with ProgressWriter(args.progress_key, study.STAGES + (assignments is None)) as tracker:
        judge = make_client(args.judge, **options, step="aware-judge:judge")
        assigner = None if assignments is not None else (
            judge if not args.assigner or args.assigner == args.judge
            else make_client(args.assigner, **options, step="aware-judge:assignment"))
        result = study.run_aware_judge(data, judge, typology, templates, config, assignments=assignments,
                                       reasons_report=report, assigner=assigner, progress=tracker)
        path = store.save_result(study.KIND, result)
    out = _summary(result, path)
    if args.json:
        cli.print_json(out)
        return
    print(f"{data.name}: judge {out['judge']}" + (f"; assigner {out['assigner']}" if out["assigner"] else ""))
    for setup, sets in out["sets"].items():
        print(f"  {setup}: H2J {len(sets['hard'])} queries ({len(sets['hard_used'])} with a reason), "
              f"{len(sets['control'])} control queries")
    for gate in out["gates"]:
        print(f"  not a finding: {gate}")
    primary = [p for p in out["verdicts"] if _is_primary(p, out)]
    print(textwrap.fill(f"primary comparison (declared; read first): {out['primary']}, and the hard x arm "
                        f"interaction. Why: {out['selection_note']}", 100, initial_indent="  ",
                        subsequent_indent="    "))
    for part in primary:
        _print_part(part)
    print("  secondary comparisons (Holm across the declared family of "
          f"{len(out['family'])} per setup, the primary one included):")
    for part in out["verdicts"]:
        if part not in primary:
            _print_part(part)
    print(f"stored: {path}")


def _aware_judge_arguments(p) -> None:
    p.add_argument("--dataset", choices=list(DATASETS), default=None, help="required unless --list")
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--judge", default="auto", metavar="SPEC", help="the relevance judge (an LLM spec)")
    reasons_args(p, "h2j", "the H2J queries", "the judge")
    p.add_argument("--cap", type=_cap, default=DEFAULT_CAP, metavar="N|none",
                   help="judged pairs per query at most (stratified by grade, the study judge's sample); none: all")
    p.add_argument("--quantile", type=cli.quantile, default=0.25, help="H2J: the top q of the queries by disagreement")
    p.add_argument("--max-queries", type=cli.positive_int, default=None,
                   help="the first N judged queries with passage text, in topic order (recorded)")
    p.add_argument("--control-seed", type=cli.nonnegative_int, default=0, help="seed of the control queries' draw")
    p.add_argument("--list", action="store_true", help="list the stored results (of --dataset, else all)")
    progress_key_arg(p)
    cli.json_arg(p)
    llm_args(p)


COMMANDS = (
    cli.Command("aware-judge", "difficulty-aware judging: the judge re-judges H2J and control queries with a "
                               "difficulty sentence and a control sentence", _aware_judge_arguments, cmd_aware_judge),
)
