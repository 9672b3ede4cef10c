"""Issue 29 in a real browser: the Findings page's download buttons (Debian's chromium through Playwright
against ``streamlit run app.py``): the findings CSV and the study export ZIP are clicked, downloaded and
read. The private cache holds the designed study (``tests.support.failure_fixture``), whose three pairs
tie; its 8 queries are under every overlap claim's minimum, so ``h2r_h2j_largest`` reads "inconclusive"
(issue 33)."""
from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
import zipfile

import pytest

from tests.browser.support import ARTIFACTS, choose_option, click, launch_browser
from tests.support.failure_fixture import run_designed_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def study_in_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))  # the dashboard fixture's cache
    return run_designed_study(tmp_path / "designed")


def test_findings_page_downloads(study_in_cache, dashboard, tmp_path):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 2400}, accept_downloads=True)
        try:
            page.goto(f"{dashboard}/findings")
            page.get_by_text("Query failure (pipeline findings)").wait_for(timeout=90_000)
            page.get_by_role("button", name="Download findings (CSV)").wait_for(timeout=90_000)
            with page.expect_download(timeout=60_000) as download:
                click(page, page.get_by_role("button", name="Download findings (CSV)"))
            rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
            verdicts = {r["finding"]: r["verdict"] for r in rows}
            assert len(rows) == 6 and verdicts["h2r_h2j_largest"] == "inconclusive"
            reasons = {r["finding"]: r["reason"] for r in rows}
            assert verdicts["difficulty_aware_preferred"] == "not measurable here"
            assert "designed: no preference result for designed" in reasons["difficulty_aware_preferred"]
            # issue 33: after three other downloads the ZIP failed silently ("Deferred file ... not found"):
            # each download reran the page, which dropped the deferred files the browser still pointed at
            for name in ("Download findings (LaTeX)", "Download findings (JSON)"):
                with page.expect_download(timeout=60_000) as download:
                    click(page, page.get_by_role("button", name=name))
                assert open(download.value.path(), encoding="utf-8").read().strip()
            # the study export: pick the designed dataset, download the ZIP, read its manifest and Venn SVG
            page.get_by_text("Study dataset").wait_for(timeout=30_000)
            choose_option(page, page.locator("[data-testid='stSelectbox']", has_text="Study dataset"), "designed")
            button = page.get_by_role("button", name="Download the study's figures and tables (ZIP)")
            button.wait_for(timeout=60_000)
            with page.expect_download(timeout=120_000) as download:
                click(page, button)
            archive = zipfile.ZipFile(download.value.path())
            manifest = json.loads(archive.read("manifest.json"))
            assert manifest["study_id"] == study_in_cache["id"]
            svg = archive.read("venn-designed-run_designed-answers_designed-judge_binary.svg").decode()
            # the title names dataset and configuration; sized to the page's line (issue 40: type >= 8 pt), a
            # title longer than the line wraps, each line its own <text>: whole once the lines are joined
            texts = " ".join("".join(t.itertext()) for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text"))
            assert "DESIGNED: designed-run | designed-answers | designed-judge | binary" in " ".join(texts.split())
            assert {f["file"] for f in manifest["files"]} == set(archive.namelist()) - {"manifest.json"}
            page.screenshot(path=str(ARTIFACTS / "findings.png"), full_page=True)
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / "findings-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
