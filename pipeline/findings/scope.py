"""Which stored studies the findings read, and what each rests on (ids, models, digests).

A dataset's findings read its newest stored study (``pipeline.study.store``; ``--data DIR``: the newest
computed from that folder), every configuration of it. ``all`` is the registry's datasets (DL19-DL22)
plus any other dataset with a stored study: one without a study is a part that is "not measurable
here: no study for dl21", never left out silently.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.study import store as studies
from pipeline.study.result import StudyResult

ALL = "all"


@dataclass
class DatasetStudy:
    dataset: str
    study: StudyResult | None  # None: no stored study for this dataset (and folder)
    why_none: str = ""


def datasets_in_scope(dataset: str = ALL) -> list[str]:
    from pipeline.data.datasets import DATASETS

    if dataset != ALL:
        return [dataset]
    return list(DATASETS) + [d for d in studies.study_datasets() if d not in DATASETS]


def newest_study(dataset: str, data_folder: str | Path | None = None, study_id: str | None = None) -> DatasetStudy:
    """The dataset's newest study (or ``study_id``), typed; ``study`` None with the reason when none."""
    if study_id is not None:
        return DatasetStudy(dataset, StudyResult.from_dict(studies.load_study(dataset, study_id)))
    listed = studies.list_studies(dataset, data_folder)
    if not listed:
        where = f" computed from {data_folder}" if data_folder is not None else ""
        return DatasetStudy(dataset, None, f"no study for {dataset}{where}")
    return DatasetStudy(dataset, StudyResult.from_dict(studies.load_study(dataset, listed[0]["id"])))


def studies_in_scope(dataset: str = ALL, data_folder: str | Path | None = None) -> list[DatasetStudy]:
    return [newest_study(d, data_folder) for d in datasets_in_scope(dataset)]


def model_record(role: str, name: str, provenance: dict) -> dict:
    """``{role, name, label, backend, model, digest, small}`` of one component's model."""
    return {"role": role, "name": name, "label": provenance.get("label", name), "backend": provenance.get("backend"),
            "model": provenance.get("model"), "digest": provenance.get("digest") or "", "small": bool(provenance.get("small"))}


def study_record(study: StudyResult) -> dict:
    """What a finding resting on ``study`` names: its id, dataset, time, configurations and models."""
    models = [model_record("generator", name, g.provenance) for name, g in study.generators.items()]
    models += [model_record(f"judge ({setup})", name, j.provenance)
               for name, per in study.judges.items() for setup, j in per.items()]
    retrievers = [{"name": name, "kind": r.info.get("kind"), "provenance": r.info.get("provenance")}
                  for name, r in study.retrievers.items()]
    return {"kind": "study", "dataset": study.dataset, "id": study.id, "time": study.time,
            "configurations": list(study.configurations), "retrievers": retrievers, "models": models}


def configuration_scope(study: StudyResult, label: str) -> str:
    return f"{study.dataset} · {label}"
