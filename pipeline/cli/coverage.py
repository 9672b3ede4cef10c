"""``coverage``: each dataset's judged queries and how many judged / relevant passages have text."""
from __future__ import annotations

from pipeline.cli.output import dump
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
        dump(out)


def add_commands(command) -> None:
    p = command("coverage", "judged queries and passage-text coverage")
    p.add_argument("--dataset", default="all", choices=[*DATASETS, "all"])
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_coverage)
