"""``export``: one stored study's publication files (``pipeline.export.study``): Venn diagrams as SVG/PDF/PNG,
overlap, pairwise, stability, findings, validation and preference tables as CSV and booktabs LaTeX, the
hard sets' per-query CSVs, and ``manifest.json``."""
from __future__ import annotations

from pipeline.cli.output import dump


def cmd_export(args) -> None:
    from pipeline.export.study import export_study

    export = export_study(args.dataset, args.study, args.out, data_folder=args.data)
    if args.json:
        dump(export.manifest())
        return
    print(f"{len(export.files)} files written to {export.folder} (manifest.json lists them)")
    for item in export.not_written:
        print(f"  not written: {item['what']}: {item['reason']}")


def add_commands(command) -> None:
    p = command("export", "a stored study's figures (SVG, PDF, PNG), tables (CSV, LaTeX) and manifest")
    p.add_argument("--dataset", required=True, help="the study's dataset (dl19..dl22 or another stored one)")
    p.add_argument("--study", default="latest", metavar="ID|latest", help="the study id, or the newest")
    p.add_argument("--data", default=None, help="with --study latest: the newest computed from this data folder")
    p.add_argument("--out", required=True, help="folder to write the files into (created)")
    p.add_argument("--json", action="store_true", help="print the manifest")
    p.set_defaults(func=cmd_export)
