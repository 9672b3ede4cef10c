"""The Query page in a real browser: a deep link on a cold server, and from a Venn click on the Failure overlap
page through the region's link to the Query page of its query (it opens in its own tab).

The store holds the designed study as ``run_study`` stored it (``tests.pages.support.store_designed_study``:
nothing to compute), so the test is the browser's part only.

The page's tables are Streamlit data grids (glide-data-grid): a canvas drawn a moment after the script run ends,
with an accessible ``table[role=grid]`` of the cells it shows. A screenshot taken as soon as the "Hard sets"
heading was there showed the Retrieval and Hard sets grids as empty boxes (issue 36: the frames held their rows;
the grids had not drawn yet). The test now waits for each grid's rows and checks them against the stored study
before it takes the screenshot.
"""
from __future__ import annotations

import pytest

from tests.browser.support import ARTIFACTS, REGION_POINT_JS, REGION_READY_JS, click, launch_browser, when_idle
from tests.pages.support import store_designed_study
from tests.support.failure_fixture import TOPICS

pytestmark = [pytest.mark.browser, pytest.mark.slow]
MARKUP_JS = "() => document.querySelectorAll('.stMain b, .stMain script, .stMain img').length"
# the cells each drawn data grid shows (header row first), from its accessible table; a grid not drawn yet (or in
# a closed expander) has none
GRID_CELLS_JS = """() => [...document.querySelectorAll('.stMain [data-testid=stDataFrame] table[role=grid]')]
  .map(t => [...t.querySelectorAll('tr')].map(tr => [...tr.querySelectorAll('th, td')].map(c => c.textContent)))"""
GRIDS_DRAWN_JS = f"""(headers) => {{
  const grids = ({GRID_CELLS_JS})();
  return headers.every(h => grids.some(rows => rows.length > 1 && rows[0][0] === h));
}}"""


@pytest.fixture
def study_in_cache(tmp_path, monkeypatch):
    # the dashboard fixture points IRDASH_CACHE_DIR at tmp_path / "cache"; the study is stored there first
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    return store_designed_study(tmp_path / "cache", tmp_path)


def _query_shown(page, qid: str) -> None:
    """The Query page shows ``qid``'s text as text (its HTML makes no element)."""
    page.get_by_role("heading", name="Query", exact=True).wait_for(timeout=90_000)
    page.locator("[data-testid='stText']", has_text=TOPICS[qid]).first.wait_for(timeout=90_000)
    when_idle(page)
    assert page.evaluate(MARKUP_JS) == 0
    assert page.get_by_text("Page not found").count() == 0


def _grids_show_the_study(page, study: dict, qid: str) -> None:
    """The Retrieval and Hard sets grids, once drawn, hold the stored study's rows for ``qid``: each retriever
    with its H2R membership, each configuration with its three sets' membership (the cells as the grid shows
    them: ``true`` / ``false``)."""
    page.wait_for_function(GRIDS_DRAWN_JS, arg=["retriever", "configuration"], timeout=60_000)
    grids = {rows[0][0]: rows for rows in page.evaluate(GRID_CELLS_JS)}
    shown = lambda value: str(value).lower()  # noqa: E731  (a bool as the grid's accessible cell reads)
    retrieval = grids["retriever"]
    assert retrieval[0][:3] == ["retriever", "nDCG@10", "in its H2R set (all queries)"]
    assert [(r[0], r[2]) for r in retrieval[1:]] == [
        (name, shown(qid in r["h2r"])) for name, r in study["retrievers"].items()]
    sets = grids["configuration"]
    assert sets[0][:4] == ["configuration", "hard to retrieve (H2R)", "hard to generate (H2G)", "hard to judge (H2J)"]
    assert [r[:4] for r in sets[1:]] == [[label, *(shown(qid in config["sets"][t]) for t in ("h2r", "h2g", "h2j"))]
                                         for label, config in study["configurations"].items()]


def test_query_page_from_a_deep_link_and_from_a_venn_region(study_in_cache, dashboard):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        context = browser.new_context(viewport={"width": 1400, "height": 2600})
        page = context.new_page()
        try:
            # 1. the first page this fresh server serves: a deep link to q7, whose query is HTML
            page.goto(f"{dashboard}/query?dataset=dl19&qid=q7")
            _query_shown(page, "q7")
            _grids_show_the_study(page, study_in_cache, "q7")  # q7: BM25 misses its passage (in the H2R set)
            # 2. the Failure overlap page: a click in the H2J-only region (q1), then its link to the Query page
            page.goto(f"{dashboard}/failure-overlap")
            page.wait_for_function(REGION_READY_JS, arg="h2j", timeout=90_000)
            when_idle(page)
            page.mouse.click(*page.evaluate(REGION_POINT_JS, "h2j"))
            link = page.get_by_role("link", name="Open this query on the Query page")
            page.wait_for_function("() => [...document.querySelectorAll('a')].some(a => a.href.endsWith('qid=q1'))",
                                   timeout=60_000)
            with context.expect_page() as opened:
                click(page, link)
            query_page = opened.value
            _query_shown(query_page, "q1")
            assert query_page.url == f"{dashboard}/query?dataset=dl19&qid=q1"
            query_page.get_by_role("heading", name="Hard sets").wait_for(timeout=30_000)
            _grids_show_the_study(query_page, study_in_cache, "q1")
            query_page.screenshot(path=str(ARTIFACTS / "query_page.png"), full_page=True)
        except BaseException:
            for i, shown in enumerate(context.pages):
                shown.screenshot(path=str(ARTIFACTS / f"query_page-failure-{i}.png"), full_page=True)
            raise
        finally:
            browser.close()
