"""Fixtures of the page tests (AppTest; helpers in ``tests/pages/support.py``)."""
from __future__ import annotations

import os
import signal
import time

import pytest
import streamlit as st

from core import jobs, paths
from tests.support.workers import end_workers_under


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private cache (run store, jobs, studies) per test, no irdash.toml, no TREC DL folder, streamlit's
    caches cleared; nothing may start on the CPU or any GPU (a job a page queues stays queued: the job
    runner has its own tests). Queued jobs and any worker a page started are ended after the test."""
    from ltr.views import home

    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv("IRDASH_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.delenv("IRDASH_DATA_TREC_DL", raising=False)
    monkeypatch.setenv(jobs.LIMITS_ENV, ",".join(["cpu=0"] + [f"cuda:{i}=0" for i in range(home.gpu_count())]))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield cache_dir
    for job in jobs.list_jobs(status=jobs.ACTIVE_STATUSES):
        jobs.cancel(job.id)
    # A worker started by the page may not have checked in yet: give it a moment, then end it. Its launcher
    # creates the worker log (core.jobs.lock.ensure_worker): without one no worker was started (the test
    # queued its jobs without one), and there is nothing to wait for.
    launched = (paths.cache_dir() / "jobs" / "worker.log").exists()
    deadline = time.monotonic() + (5 if launched else 0)
    while True:
        info = jobs.worker_info()
        if info and info["alive"]:
            try:
                os.kill(info["pid"], signal.SIGKILL)
            except ProcessLookupError:  # the row is from an earlier worker; the live one exits when idle
                pass
            break
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    end_workers_under(tmp_path)  # a second worker, launched in a race, took the lock of the one killed
