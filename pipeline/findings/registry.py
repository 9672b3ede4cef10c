"""Every finding of the failure paper, in the paper's order, checked on the stores (``check_findings``)."""
from __future__ import annotations

from pathlib import Path

from pipeline.findings.agreement import annotation_rows, typology_agreement
from core.findings import rule_text
from pipeline.findings.finding import Finding
from pipeline.findings.overlap import all_three_under_10pct, h2r_h2j_largest, half_exclusive
from pipeline.findings.preference import difficulty_aware_preferred
from pipeline.findings.scope import ALL, studies_in_scope
from pipeline.findings.stability import structure_stable

STUDY_FINDINGS = (all_three_under_10pct, half_exclusive, h2r_h2j_largest, structure_stable)
NAMES = ("all_three_under_10pct", "half_exclusive", "h2r_h2j_largest", "structure_stable", "typology_agreement",
         "difficulty_aware_preferred")


def check_findings(dataset: str = ALL, data_folder: str | Path | None = None, *, study_id: str | None = None,
                   annotations: str | Path | None = None) -> list[Finding]:
    """Each finding over ``dataset`` (``all``: every registry dataset and any other with a study): the
    newest study per dataset (``study_id``: that study of ``dataset``), the annotation store
    (``annotations``: its path, default the cache's) and the stored preference results."""
    from pipeline.findings.scope import newest_study

    scoped = ([newest_study(dataset, study_id=study_id)] if study_id is not None
              else studies_in_scope(dataset, data_folder))
    found = [check(scoped) for check in STUDY_FINDINGS]
    found.append(typology_agreement(*annotation_rows(annotations)))
    found.append(difficulty_aware_preferred(dataset))
    return found


def findings_report(found: list[Finding], dataset: str) -> dict:
    """The JSON form ``pipeline findings --json`` prints."""
    return {"dataset": dataset, "findings": {f.name: f.to_dict() for f in found}}


def text_lines(found: list[Finding]) -> list[str]:
    """``pipeline findings``' text: per finding its verdict and reason, the paper's figure, the claim's rule,
    then per part its headline (verdict, n, interval or test, models with their sizes) and its reason."""
    lines = []
    for f in found:
        lines.append(f"{f.name}: {f.verdict} — {f.reason}")
        lines.append(f"  paper: {f.paper}")
        if f.rule:
            lines.append(f"  rule: {rule_text(f.rule)}")
        for part in f.parts:
            lines.append(f"  [{part.headline}] {part.scope}: {part.reason}")
        for rest in f.rests_on:
            lines.append("  rests on: " + ", ".join(f"{k} {v}" for k, v in rest.items()
                                                    if k in ("kind", "dataset", "id", "model", "path")))
    return lines
