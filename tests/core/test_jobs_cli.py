"""``python -m core.jobs`` on the CLI convention (``core.cli``): a bad flag exits 2 naming it, an unknown
job id is bad input (2, one line), ``--json`` documents, and a second worker says why it exits 1."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from core.jobs import cli as jobs_cli
from core.paths import PROJECT_ROOT


@pytest.fixture
def jobs_cache(tmp_path, monkeypatch):
    """A private jobs store and worker lock (no other test's worker can hold it)."""
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("argv, message", [
    (["worker", "--poll", "-1"], "argument --poll: expected a number > 0, got -1"),
    (["worker", "--idle-exit", "-5"], "argument --idle-exit: expected a number >= 0, got -5"),
    (["list", "--limit", "0"], "argument --limit: expected an integer >= 1, got 0"),
    (["cancel", "x"], "argument job_id: expected an integer >= 1, got 'x'"),
], ids=lambda x: x if isinstance(x, str) else " ".join(x))
def test_a_bad_flag_exits_2_naming_it(jobs_cache, argv, message, capsys):
    """Reproduction: --poll -1 started a worker that crashed in time.sleep, --limit 0 listed nothing."""
    with pytest.raises(SystemExit) as usage:
        jobs_cli.main(argv)
    assert usage.value.code == 2 and message in capsys.readouterr().err


def test_an_unknown_job_is_bad_input_in_one_line(jobs_cache, capsys):
    """Reproduction: JobError's traceback, exit status 1."""
    assert jobs_cli.main(["cancel", "999"]) == 2
    assert capsys.readouterr().err == "error: no job with id 999\n"


def test_list_and_cancel_print_one_json_document(jobs_cache, capsys):
    from core import jobs

    job_id = jobs.submit(["true"], label="a job", resource="cpu", start_worker=False)
    assert jobs_cli.main(["list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["jobs"]
    assert (listed["id"], listed["label"], listed["status"], listed["command"]) == (job_id, "a job", "queued", ["true"])
    assert jobs_cli.main(["cancel", str(job_id), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"id": job_id, "status": "cancelled"}


def test_a_second_worker_exits_1_saying_why(jobs_cache, capsys):
    from core.jobs.lock import try_lock

    held = try_lock()  # as a running worker holds it
    try:
        assert jobs_cli.main(["worker", "--idle-exit", "0", "--poll", "0.05"]) == 1
    finally:
        held.close()
    assert capsys.readouterr().err == "error: another job worker is running (one worker at a time runs the queue)\n"
    previous = signal.getsignal(signal.SIGTERM)  # the worker loop installs its own
    try:
        assert jobs_cli.main(["worker", "--idle-exit", "0", "--poll", "0.05"]) == 0  # the lock free: idle, exits
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_module_entry_point_keeps_the_convention(jobs_cache):
    """What ensure_worker launches (``python -m core.jobs worker``) is this command line."""
    done = subprocess.run([sys.executable, "-m", "core.jobs", "worker", "--bogus"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "unrecognized arguments: --bogus" in done.stderr
