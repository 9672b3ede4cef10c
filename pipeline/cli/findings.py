"""``findings``: the failure paper's claims checked on the stored studies, annotations and preference
results (``pipeline.findings``): each with the paper's figure, the measured figures, the verdict and
what it rests on."""
from __future__ import annotations

from core import cli


def cmd_findings(args) -> None:
    from pipeline.findings.registry import check_findings, findings_report, text_lines

    study_id = None if args.study in (None, "latest") else args.study
    if study_id is not None and args.dataset == "all":
        raise ValueError("--study ID needs --dataset (a study id belongs to one dataset)")
    found = check_findings(args.dataset, args.data, study_id=study_id, annotations=args.annotations)
    if args.json:
        cli.print_json(findings_report(found, args.dataset))
        return
    for line in text_lines(found, args.verbose):
        print(line)


def findings_dataset(text: str) -> str:
    """``--dataset``: ``all``, a registry dataset, or another dataset with a stored study; anything else
    (``dl99``) would check nothing and read like a clean result, so it exits 2 naming the dataset."""
    import argparse

    from pipeline.data.datasets import DATASETS
    from pipeline.findings.scope import ALL
    from pipeline.study import store

    if text == ALL or text in DATASETS:
        return text
    stored = store.study_datasets()
    if store.dataset_dir(text).name in stored:
        return text
    raise argparse.ArgumentTypeError(f"unknown dataset {text!r}: use {ALL}, one of {', '.join(DATASETS)}"
                                     + (f", or a dataset with a stored study ({', '.join(stored)})" if stored else
                                        " (no other dataset has a stored study)"))


findings_dataset.__name__ = "dataset"


def _arguments(p) -> None:
    p.add_argument("--dataset", default="all", type=findings_dataset,
                   help="dl19..dl22, another stored dataset, or all")
    p.add_argument("--data", default=None, help="only studies computed from this data folder")
    p.add_argument("--study", default=None, metavar="ID|latest", help="this study of --dataset (default: newest)")
    p.add_argument("--annotations", default=None, help="annotation store (default: the cache's annotations.sqlite)")
    p.add_argument("--verbose", action="store_true", help="print every reason, rule, part headline (with its "
                   "models) and input whole, wrapped at 100 columns (default: a line per finding and per part)")
    cli.json_arg(p)


COMMANDS = (cli.Command("findings", "the failure paper's claims checked on the stored studies (verdict per claim)",
                        _arguments, cmd_findings),)
