"""``coverage``: each dataset's judged queries and how many judged / relevant passages have text."""
from __future__ import annotations

from core import cli
from pipeline.data.datasets import DATASETS


def cmd_coverage(args) -> None:
    from pipeline.data.datasets import load_dataset

    names = list(DATASETS) if args.dataset == "all" else [args.dataset]
    out = {}
    for name in names:
        data = load_dataset(name, args.data)
        out[name] = {"source": data.source, "has_qrels": data.has_qrels, "qrels_note": data.qrels_note,
                     "imported_runs": {k: str(v) for k, v in data.imported_runs().items()},
                     **data.coverage.as_dict()}
        if not args.json:
            print(f"{name}: {data.coverage.summary()}" + (f" [{data.qrels_note}]" if data.qrels_note else ""))
    if args.json:
        cli.print_json(out)


def _coverage_arguments(p) -> None:
    p.add_argument("--dataset", default="all", choices=[*DATASETS, "all"])
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    cli.json_arg(p)


COMMANDS = (
    cli.Command("coverage", "judged queries and passage-text coverage", _coverage_arguments, cmd_coverage),
)
