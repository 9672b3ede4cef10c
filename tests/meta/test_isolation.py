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
