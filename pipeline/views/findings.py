"""The Findings page's failure-paper section (``pages/findings.py``): the claims checked on the stored
studies (:mod:`pipeline.findings`), as tables and files, and a study's export as one ZIP."""
from __future__ import annotations

import json

import pandas as pd

from core.export import booktabs, in_temporary_folder
from core.findings import LATEX_REASON_CHARS, Finding, part_rows, rule_text, summary_rows
from pipeline.findings.scope import ALL, datasets_in_scope


def dataset_choices() -> list[str]:
    return [ALL, *datasets_in_scope(ALL)]


def stores_version(dataset: str = ALL) -> tuple:
    """Changes whenever a file the findings of ``dataset`` read changes: ``(cache folder, (path, mtime_ns,
    size) of each)`` over the datasets in scope's stored studies (and a legacy ``study.json``), their
    preference results and the annotation store (with its WAL, where commits land first; an empty WAL, which
    a reading connection leaves, counts as none). A cache key of the page: an unchanged store is not checked
    again, a new study or result is at once."""
    from core.paths import cache_dir
    from pipeline.annotation.store import default_path
    from pipeline.prompting.preference import list_results
    from pipeline.study.store import LEGACY_NAME, dataset_dir, studies_dir

    annotations = default_path()
    files = [annotations, annotations.with_name(annotations.name + "-wal")]
    for name in datasets_in_scope(dataset):
        files += [dataset_dir(name) / LEGACY_NAME, *sorted(studies_dir(name).glob("*.json")), *list_results(name)]
    stamps = []
    for path in files:
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        if st.st_size or not path.name.endswith("-wal"):
            stamps.append((str(path), st.st_mtime_ns, st.st_size))
    return str(cache_dir()), tuple(stamps)


def check(dataset: str = ALL) -> list[Finding]:
    from pipeline.findings.registry import check_findings

    return check_findings(dataset)


def summary_frame(found: list[Finding], reason_chars: int | None = None) -> pd.DataFrame:
    """One row per finding (``reason_chars``: its reason cut as the exports' LaTeX cuts it)."""
    return pd.DataFrame(summary_rows(found, reason_chars), columns=["finding", "verdict", "paper", "reason"])


def rule_line(finding: Finding) -> str:
    """The claim's rule as the claims file states it beside the claim (shown with the verdict)."""
    return rule_text(finding.rule) or "no rule stated"


def parts_frame(finding: Finding) -> pd.DataFrame:
    """One row per measured part: its verdict's headline (an inconclusive one with its reason, its n, its
    interval or test, the models with their sizes) beside the reason."""
    headlines = [p.headline for p in finding.parts]
    rows = [{**row, "headline": headline} for row, headline in zip(part_rows(finding), headlines)]
    return pd.DataFrame(rows, columns=["scope", "verdict", "headline", "reason"])


def findings_csv(found: list[Finding]) -> str:
    return summary_frame(found).to_csv(index=False)


def findings_latex(found: list[Finding], dataset: str) -> str:
    """The export's findings table (reasons cut as ``python -m pipeline export`` cuts them: a row cannot break
    across pages, and DL19's uncut reasons ran 554 pt off the page)."""
    return booktabs(summary_frame(found, LATEX_REASON_CHARS), f"The failure paper's claims checked on the newest "
                    f"stored study of {dataset} (pipeline findings).", label="tab:findings",
                    notes=["Reasons cut at about 400 characters; in full: the CSV and JSON downloads and python -m pipeline findings --json."])


def findings_json(found: list[Finding], dataset: str) -> str:
    from pipeline.findings.registry import findings_report

    return json.dumps(findings_report(found, dataset), indent=1, ensure_ascii=False)


def study_choices(dataset: str) -> list[str]:
    """The dataset's stored study ids, newest first."""
    from pipeline.study.store import list_studies

    return [s["id"] for s in list_studies(dataset)]


def export_zip(dataset: str, study_id: str) -> bytes:
    """The files ``python -m pipeline export --dataset D --study ID`` writes, as one ZIP."""
    from pipeline.export.study import export_study

    return in_temporary_folder(lambda folder: export_study(dataset, study_id, folder))
