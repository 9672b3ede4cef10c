"""The Findings page's failure-paper section (``pages/findings.py``): the claims checked on the stored
studies (:mod:`pipeline.findings`), as tables and files, and a study's export as one ZIP."""
from __future__ import annotations

import json

import pandas as pd

from core.export import booktabs, in_temporary_folder
from core.findings import Finding, part_rows, summary_rows
from pipeline.findings.scope import ALL, datasets_in_scope


def dataset_choices() -> list[str]:
    return [ALL, *datasets_in_scope(ALL)]


def check(dataset: str = ALL) -> list[Finding]:
    from pipeline.findings.registry import check_findings

    return check_findings(dataset)


def summary_frame(found: list[Finding]) -> pd.DataFrame:
    return pd.DataFrame(summary_rows(found), columns=["finding", "verdict", "paper", "reason"])


def parts_frame(finding: Finding) -> pd.DataFrame:
    return pd.DataFrame(part_rows(finding), columns=["scope", "verdict", "reason"])


def findings_csv(found: list[Finding]) -> str:
    return summary_frame(found).to_csv(index=False)


def findings_latex(found: list[Finding], dataset: str) -> str:
    return booktabs(summary_frame(found), f"The failure paper's claims checked on the newest stored study of "
                                          f"{dataset} (pipeline findings).", label="tab:findings")


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
