"""H2G's sampling noise on the pages: the Failure overlap page's section (the Venn with H2G redrawn per sample,
its tables and the between-generator line) and the Query page's H2G probability, from the designed
collection's sampling result (tests/support/failure_fixture.py: P(H2G) 1 for q8, 2/3 for q6, 1/3 for q5)."""
from __future__ import annotations

import shutil

import pytest

from core.result_files import save_result
from pipeline.study.sampling import KIND
from tests.pages.support import open_query_page, page_alone, store_designed_study


@pytest.fixture(scope="module")
def designed_cache(tmp_path_factory):
    """The designed study and its sampling result, computed once (real MiniLM BERTScore) into one cache."""
    from tests.support.failure_fixture import run_designed_study
    from tests.support.sampling_fixture import run_designed_sampling

    cache_dir = tmp_path_factory.mktemp("sampling-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRDASH_CACHE_DIR", str(cache_dir))
        run_designed_study(tmp_path_factory.mktemp("designed-study"))
        return cache_dir, run_designed_sampling(tmp_path_factory.mktemp("designed-samples"))


def test_overlap_page_shows_the_venn_with_the_per_sample_spread(cache, designed_cache):
    source, result = designed_cache
    for kind in ("failure", KIND):
        shutil.copytree(source / kind, cache / kind, dirs_exist_ok=True)
    at = page_alone("failure-overlap", timeout=90)
    assert [s.value for s in at.selectbox[3:7]] == ["designed-run", "designed-answers", "designed-judge", "binary"]
    assert len(at.get("plotly_chart")) == 2  # the study's Venn, and the one with H2G redrawn per sample
    captions = [c.value for c in at.caption]
    assert "Hard to generate in every sample: 1 of 8 queries; in some: 2; in none: 5." in captions
    assert any(c.startswith("other: H2G Jaccard with sample 0 0.33,") and "within the sampling spread" in c
               for c in captions)
    pairs = next(d.value for d in at.dataframe if "mean over samples" in d.value.columns)
    assert pairs.set_index("overlap").loc["all three", "mean over samples"] == 1.0
    assert pairs.set_index("overlap").loc["H2R ∩ H2G (incl. H2J)", "other"] == 2
    regions = next(d.value for d in at.dataframe if "this study" in d.value.columns).set_index("region")
    assert regions.loc["all three", "this study"] == 1 and regions.loc["all three", "max"] == 1


def test_overlap_page_says_how_to_make_a_result_when_none_is_stored(cache, designed_cache):
    shutil.copytree(designed_cache[0] / "failure", cache / "failure")
    at = page_alone("failure-overlap", timeout=90)
    assert len(at.get("plotly_chart")) == 1
    assert any("No H2G sampling result of DESIGNED is stored" in c.value for c in at.caption)


def test_query_page_shows_the_query_probability_of_being_hard_to_generate(cache, tmp_path, designed_cache):
    store_designed_study(cache, tmp_path)
    save_result(KIND, {**designed_cache[1], "dataset": "dl19"})  # the designed result, filed as DL19's
    at = open_query_page(dataset="dl19", qid="q6")
    (frame,) = [d.value for d in at.dataframe if "P(H2G)" in d.value.columns]
    assert frame.loc[0, "P(H2G)"] == pytest.approx(2 / 3) and frame.loc[0, "hard in"] == "2 of 3"
    assert frame.loc[0, "generator"] == "designed-samples"
    at = open_query_page(dataset="dl19", qid="q1")  # in no sample's H2G: probability 0, shown as such
    (frame,) = [d.value for d in at.dataframe if "P(H2G)" in d.value.columns]
    assert frame.loc[0, "P(H2G)"] == 0.0
