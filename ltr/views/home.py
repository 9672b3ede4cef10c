"""The home page's data: where training runs, which data sets are usable, how many runs are stored."""
from __future__ import annotations

import pandas as pd

from core import jobs
from core.paths import data_folder
from ltr.store import RunStore


def active_job_count() -> int:
    """Jobs queued or running, of every kind (the home page's count)."""
    return len(jobs.list_jobs(status=jobs.ACTIVE_STATUSES, limit=None))


def training_device() -> str:
    """Where a new run will train: ``cuda (<GPU names>)`` when CUDA is available, else ``cpu``."""
    import torch

    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        return f"cuda ({names})"
    return "cpu"


def gpu_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def dataset_overview() -> pd.DataFrame:
    """One row per registered LTR data set: kind, folds, features, folder and whether it is usable."""
    from ltr.data.datasets import DATASETS, DatasetError, check_folder, resolve_dataset

    rows = []
    for name, spec in DATASETS.items():
        folder = data_folder(name)
        if spec.synthetic:
            status, where = "embedded (generated on first use)", ""
        elif folder is None:
            status, where = "not configured", ""
        else:
            where = str(folder)
            try:
                _spec, found = resolve_dataset(name)
                status = check_folder(spec, found).summary()  # "found · 5 folds · 136 features" or "broken: ..."
            except DatasetError as exc:
                status = f"missing: {exc}"
        rows.append({"dataset": name, "kind": "synthetic" if spec.synthetic else "LETOR",
                     "folds": spec.n_folds, "features": spec.n_features, "folder": where, "status": status,
                     "description": spec.description})
    return pd.DataFrame(rows, columns=["dataset", "kind", "folds", "features", "folder", "status", "description"])


def trec_dl_status() -> tuple[str, str]:
    """``(folder, status)`` of the TREC DL data folder used by the query-failure study."""
    folder = data_folder("trec_dl")
    if folder is None:
        return "", "not configured (set IRDASH_DATA_TREC_DL or [data] trec_dl in irdash.toml)"
    return str(folder), "found" if folder.is_dir() else "configured but the folder does not exist"


def dataset_choices() -> list[str]:
    """Data sets a new run can use: the synthetic presets, then the configured real ones found."""
    overview = dataset_overview()
    usable = overview[overview["status"].str.startswith("found") | (overview["kind"] == "synthetic")]
    return list(usable.sort_values("kind", key=lambda s: s != "synthetic", kind="stable")["dataset"])


def unusable_datasets() -> list[tuple[str, str]]:
    """``(name, status)`` of the configured real data sets kept out of the Training form, and why."""
    overview = dataset_overview()
    bad = overview[(overview["kind"] != "synthetic") & (overview["folder"] != "")
                   & ~overview["status"].str.startswith("found")]
    return list(zip(bad["dataset"], bad["status"]))


def n_folds(data: str) -> int:
    from ltr.data.datasets import DATASETS

    return DATASETS[data].n_folds


def study_slate_length(data: str) -> int | None:
    """The study's training slate for ``data`` (240 for WEB10K and Yahoo and their synthetic shapes)."""
    from ltr.data.datasets import DATASETS

    return DATASETS[data].study_slate_length


def store_summary(store: RunStore) -> dict[str, int]:
    counts = store.counts()
    return {"total": sum(counts.values()), **counts}
