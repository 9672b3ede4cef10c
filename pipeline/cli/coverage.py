"""``coverage``: each dataset's judged queries, how many judged / relevant passages have text, and the data
folder's imported runs, judgments, answers and samples (with their models' sizes from its ``models.tsv``)."""
from __future__ import annotations

from core import cli
from pipeline.data.datasets import DATASETS
from pipeline.data.imported import KINDS, MODELS_FILE


def cmd_coverage(args) -> None:
    from pipeline.data.datasets import load_dataset

    names = list(DATASETS) if args.dataset == "all" else [args.dataset]
    out = {}
    for name in names:
        data = load_dataset(name, args.data)
        found = {kind: {k: str(v) for k, v in data.folder_files(kind).items()} for kind in KINDS}
        listed = data.model_sizes()
        out[name] = {"source": data.source, "has_qrels": data.has_qrels, "qrels_note": data.qrels_note,
                     **{f"imported_{kind}": files for kind, files in found.items()},
                     "model_sizes": {model: listed[model].as_dict() for model in _models(found) if model in listed},
                     **data.coverage.as_dict()}
        if not args.json:
            print(f"{name}: {data.coverage.summary()}" + (f" [{data.qrels_note}]" if data.qrels_note else ""))
            for kind, files in found.items():
                if files:
                    print(f"  imported {kind}: " + ", ".join(_named(model, listed) for model in files))
    if args.json:
        cli.print_json(out)


def _models(found: dict[str, dict[str, str]]) -> list[str]:
    """The model names among the imported judgments, answers and samples (runs are retrievers, not LLMs)."""
    return sorted({model for kind in ("judgments", "answers", "samples") for model in found[kind]})


def _named(model: str, listed: dict) -> str:
    """``text-davinci-003 (175B, models.tsv)``; ``gpt-4o-mini (size unknown, models.tsv)``; a model the folder's
    models.tsv does not list, or a retriever: its name alone."""
    row = listed.get(model)
    if row is None:
        return model
    return f"{model} ({row.parameters if row.known else 'size unknown'}, {MODELS_FILE})"


def _coverage_arguments(p) -> None:
    p.add_argument("--dataset", default="all", choices=[*DATASETS, "all"])
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    cli.json_arg(p)


COMMANDS = (
    cli.Command("coverage", "judged queries and passage-text coverage", _coverage_arguments, cmd_coverage),
)
