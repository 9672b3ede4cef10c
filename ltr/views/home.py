"""The home page's data: where training runs, which data sets are usable, how many runs are stored."""
from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class FirstStep:
    """One step of the Home page's "Start here" list: what to do, on which pages (their buttons), and
    what already shows it done (None: nothing the store can tell)."""

    title: str
    what: str
    pages: tuple[str, ...]
    done: str | None = None
    needs_trec_dl: bool = False


def first_steps(summary: dict[str, int], trec_dl_folder: str, trec_dl_found: bool) -> list[FirstStep]:
    """What a newcomer does first, in order (issue 36: the Home page explained the studies but gave no
    first step). Training needs no data, so it comes first; the failure study needs the TREC DL folder."""
    runs = summary.get("total", 0)
    return [
        FirstStep("Train a first run",
                  "No data needed: keep the synthetic data set `synthetic-mq2008`, pick one fold and a few epochs "
                  "and press **Start training**. The run trains in the background; its loss parameters and their "
                  "gradients plot live.",
                  ("pages/training.py",), done=f"{runs} run(s) in the store" if runs else None),
        FirstStep("Compare the losses",
                  "Train a few losses on the same folds, then read NDCG@k against training minutes and the paired "
                  "t-test table of one configuration.",
                  ("pages/results.py",), done=f"{summary.get('completed', 0)} completed run(s)"
                  if summary.get("completed", 0) >= 2 else None),
        FirstStep("Point the tool at the TREC DL data",
                  "The query-failure study reads a TREC DL folder (topics, qrels, passages, runs): set "
                  "`IRDASH_DATA_TREC_DL` or `[data] trec_dl` in `irdash.toml` (the **Data** section of "
                  "`README.md`), then reload this page.",
                  (), done=f"found `{trec_dl_folder}`" if trec_dl_found else None),
        FirstStep("Find the hard-to-retrieve queries",
                  "Per-query nDCG@10 of each retriever and its hard set (the lowest quartile).",
                  ("pages/hard-to-retrieve.py",), needs_trec_dl=True),
        FirstStep("Run a failure study",
                  "Hard to retrieve, generate and judge on one data set, and how the three sets overlap. On the "
                  "data folder's answers and judgments (DL19) it makes no LLM call. An LLM you name answers "
                  "otherwise; the offline embedded model's results count as that small model's (its size is "
                  "stated with each result): only a sub-1B model's are labelled not findings.",
                  ("pages/failure-overlap.py",), needs_trec_dl=True),
        FirstStep("Explain the failures",
                  "Induce a failure typology from the hard queries, then annotate the assigned reasons.",
                  ("pages/failure-typology.py", "pages/annotate-reasons.py"), needs_trec_dl=True),
        FirstStep("Act on them",
                  "Difficulty-aware answers judged against the baseline, and whether query-performance "
                  "predictors foresee the hard sets.",
                  ("pages/difficulty-aware-generation.py", "pages/predicting-failure.py"), needs_trec_dl=True),
        FirstStep("Check the papers' claims",
                  "Each claim of both papers against what the stores hold, with its n, interval and verdict.",
                  ("pages/findings.py",)),
    ]
