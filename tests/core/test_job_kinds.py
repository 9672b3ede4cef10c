"""Job kinds (core.jobs.kinds): a kind declared once builds, stores, lists and links its jobs."""
from __future__ import annotations

import pytest

from core import jobs
from core.jobs import JobKind, progress


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private jobs store; nothing starts (no worker: the jobs stay queued)."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(jobs.LIMITS_ENV, "cpu=0")
    return tmp_path


def echo_command(word: str, *, times: int = 1, progress_key: str | None = None) -> list[str]:
    if times < 1:
        raise ValueError(f"times must be at least 1, got {times}")
    return ["echo", *[word] * times, *(["--progress-key", progress_key] if progress_key else [])]


ECHO = JobKind(name="test.echo", label="echo jobs", command=echo_command,
               title=lambda word, **_: f"echo {word}", meta=lambda word, **_: {"word": word},
               progress="progress_key", progress_prefix="echo",
               link=lambda job: f"/echo?word={job.meta['word']}" if job.status == "completed" else None)


def test_a_kind_builds_its_job_from_its_parameters(cache):
    job_id = ECHO.submit(word="hi", times=2, start_worker=False)
    job = jobs.get_job(job_id)
    key = job.meta["progress"]
    assert key.startswith("echo-") and progress.progress_path(key).name == f"{key}.json"  # a valid record key
    assert job.command == ["echo", "hi", "hi", "--progress-key", key]
    assert job.label == "echo hi" and job.resource == "cpu" and job.status == "queued"
    assert list(job.meta) == ["kind", "word", "progress"] and job.meta["kind"] == "test.echo"
    assert ECHO.owns(job) and ECHO.result_link(job) is None


def test_a_given_progress_key_is_kept_and_a_kind_without_prefix_needs_one(cache):
    job = jobs.get_job(ECHO.submit(word="a", progress_key="mine-1", start_worker=False))
    assert job.meta["progress"] == "mine-1" and job.command[-1] == "mine-1"
    strict = JobKind(name="test.strict", label="strict", command=echo_command, title=lambda word, **_: word,
                     progress="progress_key")
    with pytest.raises(jobs.JobError, match="progress_key"):
        strict.submit(word="a", start_worker=False)
    assert jobs.list_jobs() == [job]  # nothing half-queued


def test_bad_parameters_queue_nothing(cache):
    with pytest.raises(ValueError, match="times must be at least 1"):
        ECHO.submit(word="x", times=0, start_worker=False)
    assert jobs.list_jobs() == []


def test_a_kind_lists_only_its_jobs_by_meta_fields_however_many_others_are_newer(cache):
    mine = [ECHO.submit(word=w, start_worker=False) for w in ("a", "b", "a")]
    for i in range(205):  # more than the 200 newest jobs the pages' lists used to filter
        jobs.submit(["true"], label=f"other {i}", meta={"kind": "test.other", "word": "a"}, start_worker=False)
    assert [j.id for j in ECHO.jobs(limit=None)] == mine[::-1]
    assert [j.id for j in ECHO.jobs(word="a")] == [mine[2], mine[0]]
    assert [j.id for j in ECHO.jobs(1, word="a")] == [mine[2]]
    assert ECHO.jobs(word="c") == []
    assert len(jobs.list_jobs(meta={"word": "a"}, limit=None)) == 207


@pytest.fixture
def registry(monkeypatch):
    """The registry as it was before the test (the kinds a test registers are forgotten after it)."""
    from core.jobs import kinds

    monkeypatch.setattr(kinds, "_KINDS", dict(kinds._KINDS))


def test_registry_finds_a_kind_by_the_name_its_jobs_store(cache, registry):
    kind = jobs.register(JobKind(name="test.registered", label="registered", command=echo_command,
                                 title=lambda word, **_: word))
    assert jobs.register(kind) is kind  # the same definition again (a module reloaded): kept
    job = jobs.get_job(kind.submit(word="w", start_worker=False))
    assert jobs.kind_of(job) is kind and jobs.kind_named("test.registered") is kind
    assert jobs.kind_of(jobs.get_job(jobs.submit(["true"], label="x", start_worker=False))) is None
    assert jobs.kind_named("test.never-defined") is None

    def other_command(word: str) -> list[str]:
        return ["printf", word]

    with pytest.raises(jobs.JobError, match="defined twice"):
        jobs.register(JobKind(name="test.registered", label="again", command=other_command, title=str))
    assert jobs.kind_named("test.registered") is kind


def test_a_finished_job_links_to_its_result(cache):
    from dataclasses import replace

    job = jobs.get_job(ECHO.submit(word="w", start_worker=False))
    assert ECHO.result_link(replace(job, status="completed")) == "/echo?word=w"
