"""In real Chromium against a real ``streamlit run app.py`` (issue 30, items 8 and 9):

- a form with an out-of-range number says which field is wrong and queues nothing. The number inputs
  used to carry min/max bounds, and the browser kept the previous value of an entry outside them
  without a word: epochs -3 and learning rate -0.5 queued ``--epochs 20 --lr 0.001``; queries -5 and
  pairs -2 on the Failure overlap form queued a study of every query at cap 20;
- the Failure typology page follows a job without a reload: its status in the jobs table, then the
  result the job wrote in place of "No typology run yet".
"""
from __future__ import annotations

import contextlib
import sys
import textwrap

import pytest

from core import jobs
from tests.browser.support import ARTIFACTS, ROOT, click, enter_value, launch_browser, wait
from tests.pages.support import ISSUE_CASES

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# The text of every cell of the page's data frames (glide-data-grid keeps an accessible table of them).
GRID_TEXT_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(e => e.textContent).join('\\n')"""


def _refused_or_queued(page, error: str) -> str:
    """Wait until the page answers the click: the refusal naming the field, or a "Queued" line."""
    page.locator(f"[data-testid='stAlert']:has-text('{error}'), [data-testid='stAlert']:has-text('Queued')") \
        .first.wait_for(timeout=30_000)
    # (the page's markdown shows ">=" as "≥")
    return " | ".join(page.locator("[data-testid='stAlert']").all_inner_texts()).replace("≥", ">=")


@pytest.fixture
def no_job_starts(dashboard):
    jobs.set_limit("cpu", 0)  # were a job queued (the defect), it would only wait; the assertions see it
    return dashboard


@contextlib.contextmanager
def _open(url: str, shot: str):
    """A Chromium page at ``url``; a screenshot ``test-artifacts/<shot>-failure.png`` when the block fails."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        try:
            page.goto(url)
            yield page
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"{shot}-failure.png"), full_page=True)
            raise
        finally:
            browser.close()


@pytest.mark.parametrize("case", list(ISSUE_CASES))
def test_the_issues_out_of_range_forms_are_refused_in_the_browser(no_job_starts, case):
    """Typed into the real number inputs: the page names each bad field, and no job is queued."""
    page_name, texts, numbers, start, expected = ISSUE_CASES[case]
    with _open(f"{no_job_starts}/{page_name}", f"forms_{case}") as page:
        expander = page.get_by_text("Run the study (background job)")  # the overlap form is in an expander
        if page_name == "failure-overlap":
            click(page, expander)
        page.get_by_role("button", name=start, exact=True).wait_for(timeout=60_000)
        for label, value in {**texts, **numbers}.items():
            enter_value(page, page.get_by_label(label, exact=True), str(value))
        click(page, page.get_by_role("button", name=start, exact=True))
        alerts = _refused_or_queued(page, expected[0].split(":")[0] + ": expected")
        for line in expected:
            assert line in alerts, alerts
    assert [j.command for j in jobs.list_jobs(limit=None)] == []  # nothing queued


# A typology job that waits for a gate file (so the test sees it running, however fast the machine),
# then writes a real typology run (scripted model, the page's store) and ends.
TYPOLOGY_JOB = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    gate = Path({gate!r})
    while not gate.exists():
        time.sleep(0.1)
    from pipeline.typology.induction import HardQuery, InductionConfig
    from pipeline.typology.runner import run_typology
    from pipeline.typology.store import TypologyStore
    from tests.support.llm_helpers import scripted_client
    from tests.pages.support import typology_reply
    client = scripted_client(typology_reply, Path({scratch!r}))
    with TypologyStore() as store:
        run_typology(client, store, dataset="dl19", task="h2r", hard_set={{"n_hard": 2}},
                     queries=[HardQuery("q1", "query one", "Top passages:"), HardQuery("q2", "query two", "x")],
                     config=InductionConfig(batch_size=2))
""")


def test_typology_page_follows_a_job_to_its_result_without_a_reload(dashboard, tmp_path):
    from pipeline.views import failure_typology as view

    gate = tmp_path / "gate"
    (tmp_path / "scratch").mkdir()
    with _open(f"{dashboard}/failure-typology", "typology_live") as page:
        page.get_by_text("No typology run yet").wait_for(timeout=60_000)
        code = TYPOLOGY_JOB.format(root=str(ROOT), gate=str(gate), scratch=str(tmp_path / "scratch"))
        job_id = jobs.submit([sys.executable, "-c", code], label="typology h2r on dl19 (test)",
                             meta={"kind": view.TYPOLOGY.name, "dataset": "dl19", "task": "h2r"})
        # the page, never reloaded, shows the job as it runs ...
        wait(lambda: jobs.get_job(job_id).status == "running", 60, "the job to start")
        page.wait_for_function(f"() => ({GRID_TEXT_JS})().includes('running')", timeout=30_000)
        assert page.get_by_text("No typology run yet").count() == 1  # nothing written yet
        gate.touch()
        wait(lambda: jobs.get_job(job_id).status != "running", 90, "the job to end")
        assert jobs.get_job(job_id).status == "completed", jobs.get_job(job_id).log_tail
        # ... then its end and the run it wrote, in place of "No typology run yet"
        page.get_by_text("Rounds of induction").wait_for(timeout=30_000)
        page.wait_for_function(f"() => ({GRID_TEXT_JS})().includes('completed')", timeout=30_000)
        assert page.get_by_text("No typology run yet").count() == 0
