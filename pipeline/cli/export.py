"""``export``: one stored study's publication files (``pipeline.export.study``): Venn diagrams as SVG/PDF/PNG,
overlap, pairwise, stability, findings, validation and preference tables as CSV and booktabs LaTeX, the
hard sets' per-query CSVs, and ``manifest.json``."""
from __future__ import annotations

from core import cli


def cmd_export(args) -> None:
    from pipeline.export.study import export_study

    export = export_study(args.dataset, args.study, args.out, data_folder=args.data)
    if args.json:
        cli.print_json(export.manifest())
        return
    print(f"{len(export.files)} files written to {export.folder} (manifest.json lists them)")
    for item in export.not_written:
        print(f"  not written: {item['what']}: {item['reason']}")


def _arguments(p) -> None:
    p.add_argument("--dataset", required=True, help="the study's dataset (dl19..dl22 or another stored one)")
    p.add_argument("--study", default="latest", metavar="ID|latest", help="the study id, or the newest")
    p.add_argument("--data", default=None, help="with --study latest: the newest computed from this data folder")
    p.add_argument("--out", required=True, help="folder to write the files into (created)")
    cli.json_arg(p, help="print the manifest")


COMMANDS = (cli.Command("export", "a stored study's figures (SVG, PDF, PNG), tables (CSV, LaTeX) and manifest",
                        _arguments, cmd_export),)
