"""``export``: one comparison's publication files (:mod:`ltr.export`): the NDCG-vs-time scatter and θ_d per
fold as SVG/PDF/PNG, the significance, cost, drift and findings tables as CSV and booktabs LaTeX (captions
carry the training configuration), and ``manifest.json``."""
from __future__ import annotations

from core import cli


def cmd_export(args) -> int:
    from ltr.export import export_comparison
    from ltr.store import RunStore

    with RunStore(args.store) as store:
        export = export_comparison(store, args.data, args.model, args.experiment, args.out)
    if args.json:
        cli.print_json(export.manifest())
    else:
        print(f"{len(export.files)} files written to {export.folder} (manifest.json lists them)")
        for item in export.not_written:
            print(f"  not written: {item['what']}: {item['reason']}")
    return cli.EXIT_OK


def _arguments(p) -> None:
    p.add_argument("--data", required=True, help="the data set of the comparison (as the runs name it)")
    p.add_argument("--model", required=True, help="the ranker")
    p.add_argument("--experiment", required=True, help="the grid (experiment) whose runs are compared")
    p.add_argument("--out", required=True, help="folder to write the files into (created)")
    p.add_argument("--store", default=None, help="run store (default: the cache's runs.sqlite)")
    cli.json_arg(p, help="print the manifest")


COMMANDS = (cli.Command("export", "a comparison's figures (SVG, PDF, PNG), tables (CSV, LaTeX) and manifest",
                        _arguments, cmd_export),)
