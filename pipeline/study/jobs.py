"""The failure-study job kind: ``python -m pipeline run`` for one dataset, in the background.

Its id is chosen before it is queued (the job's ``study_id``), so the job's progress record carries
that id and a finished job links to the study it wrote (the Failure overlap page, that study selected).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from core.jobs import Job, JobKind, register
from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.study import store
from pipeline.data.imported import folder_judgments
from pipeline.study.config import StudyConfig
from pipeline.study.universe import DEFAULT_UNIVERSE


def study_command(dataset: str, folder: str | Path | None, *, generator: str = "auto",
                  imported_judges: Sequence[str] = (), llm_judge: str = "", cap: int = DEFAULT_CAP,
                  max_queries: int | None = None, study_id: str | None = None,
                  partial_references: str = "exclude", universe: str = DEFAULT_UNIVERSE,
                  truncated_answers: str = "exclude") -> list[str]:
    """The CLI the background job runs: every step for ``dataset`` with exactly the judges chosen
    (the data folder's ``imported_judges`` and, when given, the LLM judge ``llm_judge``)."""
    judges = [*imported_judges, *([llm_judge.strip()] if llm_judge.strip() else [])]
    if not judges:
        raise ValueError("choose at least one judge: an imported one or an LLM judge")
    available = folder_judgments(folder, dataset) if folder is not None else {}
    unknown = [j for j in imported_judges if j not in available]
    if unknown:
        raise ValueError(f"no judgments file for {', '.join(unknown)} in the data folder (have: "
                         f"{', '.join(available) or 'none'})")
    config = StudyConfig(dataset=dataset, data_dir=folder, generators=[generator], judges=judges, cap=cap,
                         max_queries=max_queries, partial_references=partial_references, universe=universe,
                         truncated_answers=truncated_answers)
    return [sys.executable, "-m", "pipeline", "run", *config.run_args(study_id)]


def study_link(dataset: str, study_id: str) -> str:
    """The Failure overlap page's URL selecting that study."""
    return f"/failure-overlap?dataset={dataset}&study={study_id}"


def written_study(job: Job) -> str | None:
    """The link to the study a finished job wrote (None before, or when it wrote none)."""
    dataset, study_id = job.meta.get("dataset", ""), job.meta.get("study_id")
    if job.status == "completed" and study_id and store.study_path(dataset, study_id).is_file():
        return study_link(dataset, study_id)
    return None


# ``pipeline run`` writes its progress record under the study id (``--study-id``)
STUDY = register(JobKind(
    name="pipeline.failure-study", label="study runs", command=study_command,
    title=lambda dataset, **_: f"failure study on {dataset}",
    meta=lambda dataset, study_id, **_: {"dataset": dataset, "study_id": study_id},
    progress="study_id", link=written_study))
