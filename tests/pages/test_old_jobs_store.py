"""A jobs store written before job kinds existed lists and links through the kinds, as it did.

``tests/fixtures/jobs_store_before_kinds.sql`` is the SQL dump of a jobs store the code before
``core.jobs.kinds`` wrote: one job of each page's kind as its form queued it (two retrievals, a failure
study, a typology, a comparison, two training folds on the CPU and one on Ray) and one shell job of no
kind, some of them then completed, failed or cancelled. The tables expected here are what the pages'
tables showed for those rows before the move.
"""
from __future__ import annotations

import dataclasses
import sqlite3
import sys

import pytest

from core import jobs
from ltr.views import training
from ltr.store import RunStore
from pipeline.study import store as studies
from pipeline.views import (aware_judge, aware_retrieve, difficulty_aware_generation, failure_overlap,  # noqa: F401
                            failure_typology, hard_to_retrieve, predicting_failure)  # (and their kinds)
from tests.support.paths import FIXTURES

DUMP = FIXTURES / "jobs_store_before_kinds.sql"
OLD_PYTHON = "/work/main/.venv/bin/python"  # the interpreter the old code ran under
STUDY_ID = "20261203T103350Z-e40adce3-df3d"
CPU_ZERO = "waiting: the cpu limit is 0 (no job starts there; raise it to run)"


@pytest.fixture
def old_store(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0,ray=0")  # nothing starts; queued jobs say why
    conn = sqlite3.connect(tmp_path / "jobs.sqlite")
    conn.executescript(DUMP.read_text())
    conn.close()
    return tmp_path


def test_every_old_job_lists_under_its_kind(old_store):
    by_kind = {kind.name: [j.id for j in kind.jobs(limit=None)] for kind in jobs.registered_kinds()
               if not kind.name.startswith("test.")}  # kinds other tests declare own no job here
    assert by_kind == {"pipeline.retrieve": [2, 1], "pipeline.failure-study": [3], "typology": [4],
                       "pipeline.prefer": [5], "ltr.train": [8, 7, 6], "pipeline.predict": [],
                       "pipeline.aware-judge": [], "pipeline.aware-retrieve": []}  # predict, aware-*: newer
    assert [jobs.kind_of(j).label if jobs.kind_of(j) else None for j in jobs.list_jobs()] == [
        None, "training jobs", "training jobs", "training jobs", "comparisons", "typology runs", "study runs",
        "retrieval jobs", "retrieval jobs"]
    assert [j.id for j in hard_to_retrieve.RETRIEVAL.jobs(dataset="dl20")] == [2]


def test_old_jobs_show_the_tables_and_links_they_showed(old_store):
    study = studies.study_path("dl19", STUDY_ID)
    study.parent.mkdir(parents=True, exist_ok=True)
    study.write_text("{}")  # the study the completed job wrote: its row links to it
    assert hard_to_retrieve.jobs_frame(hard_to_retrieve.RETRIEVAL.jobs(dataset="dl19")).to_dict("records") == [
        {"job": 1, "retriever": "bm25", "status": "queued", "message": CPU_ZERO}]
    assert hard_to_retrieve.jobs_frame(hard_to_retrieve.RETRIEVAL.jobs(dataset="dl20")).to_dict("records") == [
        {"job": 2, "retriever": "dense", "status": "failed", "message": "ValueError: no passages for dl20"}]
    assert failure_overlap.jobs_frame(failure_overlap.STUDY.jobs()).to_dict("records") == [
        {"job": 3, "dataset": "dl19", "status": "completed", "started": "2025-12-29 09:20 UTC", "progress": "",
         "study": f"/failure-overlap?dataset=dl19&study={STUDY_ID}"}]
    assert failure_overlap.job_lines(failure_overlap.STUDY.jobs()) == []
    assert failure_typology.jobs_rows(failure_typology.TYPOLOGY.jobs()) == [
        {"job": 4, "what": "typology h2r on dl19", "status": "cancelled", "message": ""}]
    assert difficulty_aware_generation.jobs_frame(difficulty_aware_generation.PREFERENCE.jobs()).to_dict("records") == [
        {"job": 5, "dataset": "dl19", "status": "queued", "progress": CPU_ZERO}]
    with RunStore(old_store / "runs.sqlite") as store:
        frame = training.jobs_frame(store, training.TRAINING.jobs(30)).drop(columns=["elapsed"])
    assert frame.to_dict("records") == [
        {"job": 8, "label": "synthetic-mq2008 · fold 3 · learndcg · mlp · ray", "status": "queued", "resource": "ray",
         "progress": 0.0, "epochs": "", "run status": "", "run_id": "synthetic-mq2008-f3-learndcg-mlp-49f8d8b60193",
         "message": "waiting: the ray limit is 0 (no job starts there; raise it to run)"},
        {"job": 7, "label": "synthetic-mq2008 · fold 2 · learndcg · mlp", "status": "queued", "resource": "cpu",
         "progress": 0.0, "epochs": "", "run status": "", "run_id": "synthetic-mq2008-f2-learndcg-mlp-de5d792d26fa",
         "message": CPU_ZERO},
        {"job": 6, "label": "synthetic-mq2008 · fold 1 · learndcg · mlp", "status": "completed", "resource": "cpu",
         "progress": 0.0, "epochs": "", "run status": "", "run_id": "synthetic-mq2008-f1-learndcg-mlp-bd45f034042a",
         "message": ""}]
    study.unlink()  # no study file (deleted since): no link
    assert failure_overlap.jobs_frame(failure_overlap.STUDY.jobs())["study"].tolist() == [""]


def _stored(job: jobs.Job) -> tuple:
    """What a job row holds, with the interpreter and the per-job random keys made comparable."""
    def plain(value):
        if isinstance(value, str):
            # This interpreter first: CI's clone may live under a path that ends in OLD_PYTHON
            # (e.g. /check/work/main/.venv/bin/python), which a first OLD_PYTHON pass would half-replace.
            for interpreter in sorted({sys.executable, OLD_PYTHON}, key=len, reverse=True):
                value = value.replace(interpreter, "PYTHON")
            return value
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    keys = {job.meta.get("progress"), job.meta.get("study_id")} - {None}

    def text(value):
        return "KEY" if isinstance(value, str) and value in keys else plain(value)

    meta = {k: text(v) for k, v in job.meta.items()}
    return job.label, [text(c) for c in job.command], job.resource, list(meta.items())


def test_the_forms_queue_the_rows_the_old_code_queued(old_store):
    old = {j.id: _stored(j) for j in jobs.list_jobs()}
    new_ids = [
        hard_to_retrieve.RETRIEVAL.submit(dataset="dl19", retriever="bm25", folder="/data/trec_dl", start_worker=False),
        hard_to_retrieve.RETRIEVAL.submit(dataset="dl20", retriever="dense", folder="/data/trec_dl", start_worker=False),
        failure_overlap.submit_study("dl19", None, generator="auto", llm_judge="embedded", cap=4, max_queries=3),
        failure_typology.submit_typology("dl19", "h2r", max_queries=6),
        difficulty_aware_generation.submit_preference("dl19", None, generator="auto", judge="embedded", max_queries=5)]
    request = training.TrainingRequest(data="synthetic-mq2008", folds=(1, 2), losses=("learndcg",), model="mlp", epochs=3,
                                        lr=1e-3, batch_size=64, slate_length=None, seed=0, patience=10)
    new_ids += training.submit_training(request, n_gpus=0)
    new_ids += training.submit_training(dataclasses.replace(request, folds=(3,), executor="ray"), n_gpus=0)
    new = [_stored(jobs.get_job(i)) for i in new_ids]
    # issue 34: a training job now names its seed (label and meta), the one addition to what the old code queued
    for k, (label, command, resource, meta) in enumerate(new[5:], start=5):
        assert " · seed 0" in label and ("seed", 0) in meta, label
        new[k] = (label.replace(" · seed 0", "", 1), command, resource, [m for m in meta if m != ("seed", 0)])
    assert new == [old[i] for i in range(1, 9)]
