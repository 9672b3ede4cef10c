"""A jobs store written by the code before the versioned migrations (main at 20028e0,
``tests/fixtures/old_stores/``) opens with the current code: every row reads back as before, and jobs
are queued and cancelled in it."""
from __future__ import annotations

import pytest

from core import jobs
from tests.support.old_stores import copy_old_store, rows_as_before, versions


@pytest.fixture
def old_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    return copy_old_store("jobs.sqlite", tmp_path / "cache")


def test_an_old_jobs_store_reads_back_identically_and_takes_new_jobs(old_jobs):
    done, queued = jobs.get_job(1), jobs.get_job(2)
    rows_as_before(old_jobs, "jobs.sqlite")
    assert (done.status, done.exit_code, done.command[-2:], done.meta) == ("completed", 0, ["--fold", "1"],
                                                                           {"run_ids": ["run-done"]})
    assert (queued.status, queued.label, queued.meta) == ("queued", "study dl19", {"kind": "study"})
    assert jobs.resource_limits()["cpu"] == 2
    new = jobs.submit(["true"], label="new", start_worker=False)
    assert new == 3 and [j.id for j in jobs.list_jobs(status="queued")] == [3, 2]
    assert jobs.cancel(2) and jobs.get_job(2).status == "cancelled"
    assert [(s, v) for s, v, _ in versions(old_jobs)] == [("jobs", 1)]
