"""Issue 33 in a real browser: clicking a cell of the Predicting failure heatmap did nothing in Chromium
(the hover appeared, "Click a cell to see …" stayed): the cells' transparent points had hoverinfo "skip",
which in plotly.js also drops their clicks, and a heatmap trace gives Streamlit no selection. Here a stored
prediction (real evaluation of scripted values) is opened in ``streamlit run app.py`` and a cell is clicked
where a researcher would click it; its per-query scatter appears. The heatmap's title stays clear of the
target labels."""
from __future__ import annotations

import numpy as np
import pytest

from tests.browser.support import ARTIFACTS, launch_browser, when_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CELL_READY_JS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  return !!(gd && gd._fullData && gd._fullData.some(t => t.type === 'scatter' && t.customdata));
}"""
# the page coordinates of a cell's centre on the category axes (where its transparent point lies)
CELL_POINT_JS = """([predictor, target]) => {
  const gd = document.querySelector('.js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(xa.d2c(target)), box.top + ya._offset + ya.l2p(ya.d2c(predictor))];
}"""
# the title's bottom and the top of the highest target label (page pixels)
TITLE_CLEAR_JS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  const title = gd.querySelector('.gtitle').getBoundingClientRect();
  const ticks = [...gd.querySelectorAll('.xtick text')].map(t => t.getBoundingClientRect().top);
  return [title.bottom, Math.min(...ticks)];
}"""
TARGETS = ("nDCG@10[bm25]", "disagreement[judge_x (binary)]")


def _prediction() -> dict:
    from pipeline.predict import catalog, evaluation
    from pipeline.predict.compute import Prediction

    rng = np.random.default_rng(5)
    qids = [f"19{i:03d}" for i in range(30)]
    easy = rng.normal(size=30)
    ndcg = dict(zip(qids, 1 / (1 + np.exp(-easy))))
    disagreement = dict(zip(qids, np.clip(0.3 - 0.1 * easy + rng.normal(0, 0.05, 30), 0, 1)))
    targets = {"dl19": [
        evaluation.Target(TARGETS[0], "h2r", "dl19", ndcg, True,
                          frozenset(q for q in qids if ndcg[q] <= np.quantile(list(ndcg.values()), 0.25))),
        evaluation.Target(TARGETS[1], "h2j", "dl19", disagreement, False,
                          frozenset(q for q in qids if disagreement[q] >= np.quantile(list(disagreement.values()), 0.75)))]}
    predictors = {"dl19": {
        "sd@100[bm25]": catalog.PredictorValues("sd@100[bm25]", "sd@100", catalog.POST, "bm25",
                                                dict(zip(qids, easy + rng.normal(0, 0.5, 30)))),
        "avg_idf": catalog.PredictorValues("avg_idf", "avg_idf", catalog.PRE, "", dict(zip(qids, rng.normal(size=30))))}}
    rows = evaluation.evaluate(predictors, targets, n_boot=50)
    provenance = {"index": {}, "runs": {}, "models": [], "bootstrap": {"n_boot": 50, "seed": 0, "confidence": 0.95}}
    return Prediction(["dl19"], predictors, targets, rows, provenance, {"retrievers": ["bm25"], "k": 100},
                      []).as_dict()


@pytest.fixture
def prediction_in_cache(tmp_path, monkeypatch):
    from pipeline.predict import store

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))  # the dashboard fixture's cache
    return store.save(_prediction())[0]


def test_clicking_a_heatmap_cell_shows_its_queries(prediction_in_cache, dashboard):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 2200})
        try:
            page.goto(f"{dashboard}/predicting-failure")
            page.get_by_text("Click a cell to see").wait_for(timeout=90_000)
            page.wait_for_function(CELL_READY_JS, timeout=90_000)
            when_idle(page)
            title_bottom, labels_top = page.evaluate(TITLE_CLEAR_JS)
            page.mouse.click(*page.evaluate(CELL_POINT_JS, ["sd@100[bm25]", TARGETS[1]]))
            page.get_by_text(f"sd@100[bm25] against {TARGETS[1]}").wait_for(timeout=30_000)
            assert page.get_by_text("Click a cell to see").count() == 0
            assert title_bottom <= labels_top  # the rotated target labels are not over the title
            page.screenshot(path=str(ARTIFACTS / "predicting-failure-click.png"), full_page=True)
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "predicting-failure-click-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
