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
from pipeline.data.imported import folder_files
from pipeline.study.config import StudyConfig
from pipeline.study.universe import DEFAULT_UNIVERSE


def study_config(dataset: str, folder: str | Path | None, *, imported_generators: Sequence[str] = (),
                 generator: str = "", imported_judges: Sequence[str] = (), llm_judge: str = "",
                 cap: int = DEFAULT_CAP, max_queries: int | None = None, partial_references: str = "exclude",
                 universe: str = DEFAULT_UNIVERSE, truncated_answers: str = "exclude") -> StudyConfig:
    """The configuration the form asks for: exactly the generators chosen (the data folder's answers files
    ``imported_generators`` and, when given, the LLM ``generator``) and the judges chosen (its judgments files
    ``imported_judges`` and, when given, the LLM judge ``llm_judge``); a NAME the folder has no file for is refused."""
    generators = [*imported_generators, *([generator.strip()] if generator.strip() else [])]
    judges = [*imported_judges, *([llm_judge.strip()] if llm_judge.strip() else [])]
    if not generators:
        raise ValueError("choose at least one generator: imported answers or an LLM generator")
    if not judges:
        raise ValueError("choose at least one judge: an imported one or an LLM judge")
    for kind, chosen in (("answers", imported_generators), ("judgments", imported_judges)):
        available = folder_files(folder, kind, dataset)
        unknown = [name for name in chosen if name not in available]
        if unknown:
            raise ValueError(f"no {kind} file for {', '.join(unknown)} in the data folder (have: "
                             f"{', '.join(available) or 'none'})")
    return StudyConfig(dataset=dataset, data_dir=folder, generators=generators, judges=judges, cap=cap,
                       max_queries=max_queries, partial_references=partial_references, universe=universe,
                       truncated_answers=truncated_answers)


def study_command(dataset: str, folder: str | Path | None, *, study_id: str | None = None, **options) -> list[str]:
    """The CLI the background job runs: every step for ``dataset`` with exactly the components chosen
    (:func:`study_config`'s ``options``)."""
    return [sys.executable, "-m", "pipeline", "run", *study_config(dataset, folder, **options).run_args(study_id)]


def stored_without_llm(dataset: str, folder: str | Path | None, **options) -> str | None:
    """The id of the stored study of exactly this configuration when none of its components is an LLM (every
    generator and judge the data folder's files: a run would read the same files and store nothing new,
    :func:`pipeline.study.store.same_study`); None otherwise (an LLM's run may retry failed calls)."""
    if options.get("generator", "").strip() or options.get("llm_judge", "").strip():
        return None
    config = study_config(dataset, folder, **options).with_default_components()
    same = store.same_configuration(dataset, config.stored())
    return same[0]["id"] if same else None


def study_link(dataset: str, study_id: str) -> str:
    """The Failure overlap page's URL selecting that study."""
    return f"/failure-overlap?dataset={dataset}&study={study_id}"


def written_study(job: Job) -> str | None:
    """The link to the study a finished job wrote, or to the stored study its run gave the same result as (None
    before, or when it wrote none)."""
    dataset, study_id = job.meta.get("dataset", ""), job.meta.get("study_id")
    written = store.study_of_run(dataset, study_id) if job.status == "completed" and study_id else None
    return study_link(dataset, written) if written else None


# ``pipeline run`` writes its progress record under the study id (``--study-id``)
STUDY = register(JobKind(
    name="pipeline.failure-study", label="study runs", command=study_command,
    title=lambda dataset, **_: f"failure study on {dataset}",
    meta=lambda dataset, study_id, **_: {"dataset": dataset, "study_id": study_id},
    progress="study_id", link=written_study))
