"""``report``: the cross-validation table with paired t-tests against the candidate loss (text, JSON,
CSV, LaTeX), or the configurations a table could compare."""
from __future__ import annotations

import json

from core import cli


def cmd_report(args) -> int:
    import pandas as pd

    from ltr.report.paired import significance_table
    from ltr.report.runs import completed_runs, configurations, reported_models
    from ltr.report.text import fold_seed_records, format_text, to_csv, to_latex
    from ltr.store import RunStore, canonical_data

    tables, listed = [], []
    with RunStore(args.store) as store:
        for data in args.data:
            models = args.model or sorted(set(store.list_runs(data=canonical_data(data), status="completed")["model"]))
            if not models:
                raise cli.InputError(f"no completed runs for data {data!r} in {store.path}")
            if not args.model:  # a tree ranker is a baseline row of the neural rankers' tables
                models = reported_models(models)
            for model in models:
                if args.list_configurations:
                    found = configurations(completed_runs(store, data, model, experiment=args.experiment,
                                                          seed=args.seed))
                    listed.append((canonical_data(data), model, found.drop(columns="finished")))
                    continue
                tables.append(significance_table(store, data, model, candidate=args.candidate, alpha=args.alpha,
                                                 holm=args.holm, experiment=args.experiment,
                                                 seed=args.seed, configuration=args.configuration,
                                                 exclude_no_relevant=args.exclude_no_relevant))
    if args.list_configurations:
        if args.json:
            cli.print_json({"configurations": [{"data": data, "model": model,
                                                "configurations": json.loads(found.to_json(orient="records"))}
                                               for data, model, found in listed]})
        else:
            for data, model, found in listed:
                print(f"{data} / {model}")
                print(found.to_string(index=False))
        return cli.EXIT_OK
    if args.json:  # a list of table rows (older than core.cli's objects); each row adds the runs behind it
        records = []
        for table in tables:
            runs = fold_seed_records(table)
            for row in json.loads(table.to_json(orient="records")):
                records.append({**row, "per_fold_seed": runs.get(row["loss"], [])})
        print(json.dumps(records, indent=1))
    else:
        print("\n\n".join(format_text(t) for t in tables))
    if args.csv:
        to_csv(pd.concat(tables, ignore_index=True), args.csv)
    if args.latex:
        to_latex(tables, args.latex)
    return cli.EXIT_OK


def _arguments(r) -> None:
    r.add_argument("--data", nargs="+", required=True)
    r.add_argument("--model", nargs="+", default=None, help="rankers (default: every ranker with runs)")
    r.add_argument("--store", default=None)
    r.add_argument("--experiment", default=None)
    r.add_argument("--seed", type=cli.seed, default=None)
    r.add_argument("--candidate", default="learndcg", help="the loss tested against every other (default learndcg)")
    r.add_argument("--alpha", type=cli.probability, default=0.05, help="significance level of the t-tests")
    r.add_argument("--holm", action="store_true", help="Holm-correct p-values across baselines")
    r.add_argument("--csv", default=None, help="write the full table (means, p-values) as CSV")
    r.add_argument("--latex", default=None, help="write LaTeX tables")
    cli.json_arg(r, help='print the table as JSON records instead of text (with --list-configurations: '
                         '{"configurations": [{"data", "model", "configurations": [...]}]})')
    r.add_argument("--configuration", default=None,
                   help="compare the runs of this configuration (a label as --list-configurations prints it; "
                        "default: the configuration with the most completed runs); folds of different "
                        "configurations are never paired")
    r.add_argument("--list-configurations", action="store_true",
                   help="list the configurations (shared settings) with their losses and folds, and exit")
    r.add_argument("--exclude-no-relevant", action="store_true",
                   help="leave test queries without a relevant document out of the t-tests (they score 1 under "
                        "every loss by convention); the count is printed")


COMMANDS = (cli.Command("report", "cross-validation table with paired t-tests against the candidate loss",
                        _arguments, cmd_report),)
