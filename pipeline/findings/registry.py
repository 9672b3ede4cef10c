"""Every finding of the failure paper, in the paper's order, checked on the stores (``check_findings``)."""
from __future__ import annotations

from pathlib import Path

from pipeline.findings.agreement import annotation_rows, typology_agreement
from core.findings import MORE_TEXT, finding_lines
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


def text_lines(found: list[Finding], verbose: bool = False) -> list[str]:
    """``pipeline findings``' text, within 100 columns (:func:`core.findings.finding_lines`): per finding its
    verdict and reason on a line, then a line per part (verdict, n, interval or test); ``verbose``: the
    reason, the paper's figure, the claim's rule, each part's headline (models with their sizes) and reason,
    and what it rests on, whole."""
    lines = [line for f in found for line in finding_lines(f, verbose)]
    return lines if verbose else [*lines, MORE_TEXT]
