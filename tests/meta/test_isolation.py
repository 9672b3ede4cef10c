"""Test isolation: a page run under AppTest does not leak into later tests.

Streamlit's script runner makes the page it runs ``sys.modules["__main__"]``; a ``multiprocessing`` spawn
child of a later test then ran that page as its main module (``test_llm_cache``'s two-process test timed
out after the page tests). ``conftest._restore_main_module`` gives each test its ``__main__`` back; these
two tests run in file order: the first runs a page, the second spawns a child."""
from __future__ import annotations

import multiprocessing
import sys

from streamlit.testing.v1 import AppTest

from tests.support.paths import PAGES

PAGE = str(PAGES / "home.py")


def _answer(queue) -> None:
    queue.put("child ran")


def test_a_page_run_makes_itself_main_for_the_test_that_ran_it():
    AppTest.from_file(PAGE, default_timeout=60).run()
    assert getattr(sys.modules["__main__"], "__file__", "").endswith("home.py")  # what leaked before


def test_a_spawned_child_after_a_page_run_starts_from_the_test_process_main():
    assert not getattr(sys.modules["__main__"], "__file__", "").endswith("home.py")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_answer, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=60) == "child ran"
    finally:
        child.join(timeout=30)
    assert child.exitcode == 0


def test_the_workers_of_a_tests_cache_are_ended_and_no_other(tmp_path):
    """``tests.support.workers.end_workers_under`` (used by the page tests and at the session's end) ends
    the job workers whose cache lies below the folder it is given, and leaves another cache's worker."""
    import os
    import subprocess

    from tests.support.paths import ROOT
    from tests.support.waiting import wait_until
    from tests.support.workers import end_workers_under

    def worker(cache):
        return subprocess.Popen([sys.executable, "-m", "core.jobs", "worker"], cwd=ROOT,
                                env=dict(os.environ, IRDASH_CACHE_DIR=str(cache)), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    ours, other = worker(tmp_path / "test" / "cache"), worker(tmp_path / "other")
    try:
        assert wait_until(lambda: end_workers_under(tmp_path / "test") == [ours.pid] or None, timeout=60,
                          what="the test's worker to be found")
        assert ours.wait(timeout=30) == -9 and other.poll() is None
    finally:
        for proc in (ours, other):
            proc.kill()
            proc.wait()
