"""The "Hard to retrieve" page (AppTest) and pipeline.views, on a tiny designed folder and on ../shared."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import jobs
from pipeline.retrieval import evaluation, h2r
from pipeline.views import hard_to_retrieve as views
from pipeline.data.datasets import load_dataset
from pipeline.retrieval.retrievers import get_run
from pipeline.sets import overlap
from pipeline.retrieval.jobs import RETRIEVAL, retrieve_command
from tests.pages.support import page_alone
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")
TIMEOUT = 60
HOSTILE = "<script>alert('x')</script> <b>not bold</b> & more"

# Designed tiny DL19 folder: query qN has one relevant passage rN (grade 3) and one irrelevant nN.
# The rank of rN in each run (None = not retrieved) fixes every NDCG@10 without computing it:
# rank 1 -> 1, rank 2 -> 1/log2(3), rank 3 -> 1/2, absent -> 0.
QIDS = [f"q{i}" for i in range(1, 9)]
ALPHA_RANKS = [1, 1, 1, 1, 2, 3, None, None]  # hard (q = 0.25, 2 of 8): q7, q8
BETA_RANKS = [None, 1, 1, 1, 1, 1, 1, None]  # hard: q1, q8 -> hard under both: q8


def _run_lines(ranks, tag):
    lines = []
    for i, (qid, rank) in enumerate(zip(QIDS, ranks), start=1):
        ranked = [f"n{i}", f"x{i}a", f"x{i}b"]  # x*: unjudged filler
        if rank is not None:
            ranked.insert(rank - 1, f"r{i}")
        lines += [f"{qid} Q0 {pid} {k} {10 - k} {tag}" for k, pid in enumerate(ranked, start=1)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def tiny(tmp_path) -> Path:
    folder = tmp_path / "trec_dl"
    (folder / "runs").mkdir(parents=True)
    topics = {qid: f"query {qid}" for qid in QIDS} | {"q8": HOSTILE, "q9": "an unjudged topic"}
    (folder / "topics.dl19-passage.txt").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    (folder / "qrels.dl19-passage.txt").write_text(
        "".join(f"q{i} 0 r{i} 3\nq{i} 0 n{i} 0\n" for i in range(1, 9)))
    # text for the relevant passages of q1..q6 and every irrelevant one: a partial corpus
    (folder / "passages.msmarco-v1.dl19-dl20.tsv").write_text(
        "".join(f"r{i}\trelevant {i}\n" for i in range(1, 7)) + "".join(f"n{i}\tother {i}\n" for i in range(1, 9)))
    (folder / "runs" / "run.alpha.dl19.txt").write_text(_run_lines(ALPHA_RANKS, "alpha"))
    (folder / "runs" / "run.beta.dl19.txt").write_text(_run_lines(BETA_RANKS, "beta"))
    return folder


def _write_computed(cache_dir: Path, dataset: str, stem: str, text: str, meta: dict | None) -> Path:
    folder = cache_dir / "runs" / "trec_dl" / dataset
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.txt"
    path.write_text(text)
    if meta is not None:
        path.with_suffix(".json").write_text(json.dumps(meta))
    return path


def _computed_meta(dataset, retriever, n_passages):
    return {"dataset": dataset, "retriever": retriever, "n_passages": n_passages, "n_queries": 8,
            "provenance": f"computed here over a partial corpus ({n_passages:,} passages): test", "settings": {}}


# ---------------------------------------------------------------------------- pipeline.views
def test_data_folder_status(cache, tmp_path, monkeypatch):
    assert views.data_folder_status() == (None, "No TREC DL data folder is configured.")
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tmp_path / "nowhere"))
    folder, why = views.data_folder_status()
    assert folder is None and "nowhere" in why and "does not exist" in why
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tmp_path))
    assert views.data_folder_status() == (tmp_path, "")


def test_coverage_frame_and_warnings(tiny):
    data = views.load("dl19", tiny)
    cov = views.coverage_frame(data).set_index("what")
    assert cov.loc["judged queries (topics with qrels)", ["count", "of"]].tolist() == [8, 9]
    assert cov.loc["judged passages with text", ["count", "of"]].tolist() == [14, 16]
    assert cov.loc["relevant passages (grade ≥ 2) with text", ["count", "of"]].tolist() == [6, 8]
    assert cov.loc["relevant passages (grade ≥ 2) with text", "share"] == pytest.approx(0.75)
    warnings = views.coverage_warnings(data)
    assert any("only 14 of 16 judged passages and 6 of 8 relevant" in w for w in warnings)
    assert any("14 passages, a partial corpus" in w for w in warnings)


def test_run_sources_imported_and_computed(cache, tiny):
    data = views.load("dl19", tiny)
    text = _run_lines(ALPHA_RANKS, "irdash-bm25")
    _write_computed(cache, "dl19", "bm25-aaaa", text, _computed_meta("dl19", "bm25", 14))
    _write_computed(cache, "dl19", "bm25-bbbb", text, _computed_meta("dl19", "bm25", 999))
    _write_computed(cache, "dl19", "dense-cccc", text, None)  # still being written: no provenance yet
    _write_computed(cache, "dl19", "minilm-dddd", text, _computed_meta("dl20", "minilm", 14))  # wrong year
    sources = views.run_sources(data)
    assert [(s.name, s.from_data_folder) for s in sources] == [
        ("alpha", True), ("beta", True), ("bm25@computed#1", False), ("bm25@computed#2", False)]
    runs, problems = views.load_runs(data, sources)
    assert problems == []
    frame = views.retriever_frame(data, runs).set_index("retriever")
    assert frame.loc["alpha", "kind"] == "imported"
    assert frame.loc["alpha", "provenance"].startswith("imported full-corpus run")
    assert frame.loc["bm25@computed#1", "kind"] == "computed"
    assert frame.loc["bm25@computed#1", "provenance"].startswith("computed here over a partial corpus (14 passages)")
    assert frame.loc["bm25@computed#1", "note"] == ""
    assert "999 passages, this folder has 14" in frame.loc["bm25@computed#2", "note"]
    assert frame["judged queries in run"].tolist() == [8, 8, 8, 8]


def test_load_runs_reports_bad_file_without_raising(tiny):
    (tiny / "runs" / "run.broken.dl19.txt").write_text("q1 Q0 r1 1 3.0 broken\nq1 Q0 r1\n")
    data = views.load("dl19", tiny)
    runs, problems = views.load_runs(data, views.run_sources(data))
    assert [r.name for r in runs] == ["alpha", "beta"]
    assert len(problems) == 1 and problems[0].startswith("broken:") and "run.broken.dl19.txt" in problems[0]
    assert "run.broken.dl19.txt:2: expected 6 fields" in problems[0]


def test_h2r_tables_match_the_designed_ranks(tiny):
    data = views.load("dl19", tiny)
    runs, _ = views.load_runs(data, views.run_sources(data))
    report = views.h2r(data, runs, 0.25)
    summary = views.summary_frame(report).set_index("retriever")
    assert summary["H2R queries"].tolist() == [2, 2]
    assert summary.loc["alpha", "H2R mean NDCG@10"] == 0.0 and summary.loc["beta", "H2R mean NDCG@10"] == 0.0
    assert summary.loc["beta", "mean NDCG@10"] == pytest.approx(6 / 8)
    table = views.per_query_frame(data, report)
    assert len(table) == 8 and "q9" not in set(table["qid"])  # unjudged topics do not count
    assert table["qid"].tolist()[:2] == ["q7", "q8"]  # hardest first under the first retriever
    row = table.set_index("qid")
    assert row.loc["q5", "NDCG@10 · alpha"] == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert row.loc["q8", "query"] == HOSTILE  # raw text: the table shows it as text
    assert set(row.index[row["hard · alpha"]]) == {"q7", "q8"}
    assert set(row.index[row["hard · beta"]]) == {"q1", "q8"}
    assert row.index[row["hard under both"]].tolist() == ["q8"]
    assert views.intersection_label(report) == "hard under both"
    one = views.h2r(data, runs[:1], 0.5)
    assert "hard under both" not in views.per_query_frame(data, one).columns


def test_figures(tiny):
    data = views.load("dl19", tiny)
    runs, _ = views.load_runs(data, views.run_sources(data))
    report = views.h2r(data, runs, 0.25)
    fig = views.sorted_figure(report, data.topics)
    alpha, beta = fig.data
    assert list(alpha.y) == sorted(alpha.y) and len(alpha.y) == 8
    filled = [text for text, colour in zip(alpha.hovertext, alpha.marker.color) if colour != "white"]
    assert sorted(t.split(":")[0] for t in filled) == ["q7", "q8"]
    assert [s.y0 for s in fig.layout.shapes] == [report["retrievers"]["alpha"]["threshold"],
                                                 report["retrievers"]["beta"]["threshold"]]
    hover = next(t for t in alpha.hovertext if t.startswith("q8"))
    assert "<" not in hover and "&lt;script&gt;" in hover  # plotly would render tags in hover text
    scatter = views.scatter_figure(report, data.topics, "alpha", "beta")
    counts = {t.name: len(t.x) for t in scatter.data}
    assert counts == {"hard under both (1)": 1, "hard only under alpha (1)": 1, "hard only under beta (1)": 1,
                      "neither (5)": 5}


def test_submit_retrieval_queues_the_cli(cache, tiny):
    assert retrieve_command("dl19", "bm25", tiny) == [
        sys.executable, "-m", "pipeline", "retrieve", "--dataset", "dl19", "--retriever", "bm25", "--data", str(tiny)]
    with pytest.raises(ValueError, match="computable"):
        retrieve_command("dl19", "splade", tiny)
    job_id = RETRIEVAL.submit(dataset="dl19", retriever="bm25", folder=tiny)
    (job,) = RETRIEVAL.jobs(dataset="dl19")
    assert job.id == job_id and job.status == "queued" and job.meta["retriever"] == "bm25"
    assert RETRIEVAL.jobs(dataset="dl20") == []
    assert views.jobs_frame([job]).to_dict("records") == [
        {"job": job_id, "retriever": "bm25", "status": "queued",
         "message": "waiting: the cpu limit is 0 (no job starts there; raise it to run)"}]  # this fixture's limit


# ---------------------------------------------------------------------------- the page
def _page() -> AppTest:
    return page_alone("hard-to-retrieve")


def _texts(at: AppTest) -> str:
    return "\n".join(str(el.value) for kind in ("markdown", "info", "warning", "error", "success", "caption")
                     for el in getattr(at, kind))


def test_page_without_data_folder(cache):
    at = _page()
    assert at.title[0].value == "Hard to retrieve"
    assert "No TREC DL data folder is configured" in at.warning[0].value
    assert 'trec_dl = "/path/to/trec_dl"' in at.info[0].value and "IRDASH_DATA_TREC_DL" in at.info[0].value
    assert not at.dataframe and not at.selectbox
    assert "typology" in _texts(at)  # what comes next in this section


def test_page_is_in_the_query_failure_section(cache, tiny, monkeypatch):
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tiny))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/hard-to-retrieve.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Hard to retrieve"


def test_page_tiny_folder_quantile_chart_and_job(cache, tiny, monkeypatch):
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tiny))
    at = _page()
    assert at.selectbox[0].value == "dl19"
    assert "only 14 of 16 judged passages" in _texts(at)
    retrievers = at.dataframe[1].value
    assert retrievers["retriever"].tolist() == ["alpha", "beta"] and set(retrievers["kind"]) == {"imported"}
    assert at.slider[0].value == 0.25
    summary = at.dataframe[2].value.set_index("retriever")
    assert summary["H2R queries"].tolist() == [2, 2]
    assert at.metric[0].label == "Hard under both" and at.metric[0].value == "1 queries"
    table = at.dataframe[3].value.set_index("qid")
    assert table.loc["q8", "query"] == HOSTILE
    assert table.loc["q8", "query page"] == "query?dataset=dl19&qid=q8"  # each row links to its Query page
    assert len(at.get("plotly_chart")) == 2
    at.slider[0].set_value(0.5).run()
    assert not at.exception
    # q = 0.5, target floor(7 * 0.5) + 1 = 4; beta: 2 queries at 0 below a block of 6 at 1.0 -> sizes 2 or 8,
    # 2 is closer (the earlier rule, "all <= the median 1", made all 8 hard); the page says ties decided it
    summary = at.dataframe[2].value
    assert summary["H2R queries"].tolist() == [4, 2] and summary["tie block"].tolist()[1] == 6
    assert summary["target"].tolist() == [4, 4]
    assert [w.value for w in at.warning if "Ties decide" in w.value] == [
        "Ties decide membership. beta: 6 queries tie at 1 across the quantile's target of 4; the whole block was "
        "left out, so the set has 2 of 8 queries (25%, target 50%)"]
    # compute BM25 here: queued as a job, listed, button disabled while it waits
    at.button[0].click().run()
    assert not at.exception
    (job,) = jobs.list_jobs()
    assert job.command == retrieve_command("dl19", "bm25", tiny) and job.status == "queued"
    assert at.dataframe[2].value["status"].tolist() == ["queued"]
    assert at.button[0].disabled
    jobs.cancel(job.id)  # the job ends: the jobs panel reruns the page, the button is enabled again
    at.run()
    assert not at.exception
    assert at.dataframe[2].value["status"].tolist() == ["cancelled"] and not at.button[0].disabled


def test_page_lists_computed_run_from_cache(cache, tiny, monkeypatch):
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tiny))
    _write_computed(cache, "dl19", "bm25-aaaa", _run_lines(BETA_RANKS, "irdash-bm25"), _computed_meta("dl19", "bm25", 14))
    at = _page()
    retrievers = at.dataframe[1].value.set_index("retriever")
    assert retrievers.loc["bm25@computed", "kind"] == "computed"
    assert "partial corpus (14 passages)" in retrievers.loc["bm25@computed", "provenance"]
    # only the full-corpus runs by default: the partial-corpus run is not silently mixed in
    assert at.multiselect[0].value == ["alpha", "beta"]
    assert at.metric[0].label == "Hard under both"
    assert "Comparing across corpora" not in _texts(at)
    # added by the user: compared, and the page says across which corpora
    at.multiselect[0].set_value(["alpha", "beta", "bm25@computed"]).run()
    assert not at.exception
    assert at.metric[0].label == "Hard under all"
    assert "Comparing across corpora: bm25@computed searched only this folder's passages" in _texts(at)


def test_page_without_full_corpus_runs_selects_the_computed_ones(cache, tiny, monkeypatch):
    for run_file in (tiny / "runs").iterdir():
        run_file.unlink()
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(tiny))
    _write_computed(cache, "dl19", "bm25-aaaa", _run_lines(BETA_RANKS, "irdash-bm25"), _computed_meta("dl19", "bm25", 14))
    _write_computed(cache, "dl19", "dense-bbbb", _run_lines(ALPHA_RANKS, "irdash-dense"),
                    _computed_meta("dl19", "dense", 14))
    at = _page()
    assert at.multiselect[0].value == ["bm25@computed", "dense@computed"]
    assert "Comparing across corpora" not in _texts(at)


def test_unconfigured_page_help_is_code_and_points_to_the_readme(cache):
    at = _page()
    (info,) = [i.value for i in at.info]
    assert "`topics.dlYY*.txt`, `qrels.dlYY-passage.txt`" in info and "**Data** section of `README.md`" in info
    assert "shared/data" not in info  # a fresh clone has no such folder
    readme = (ROOT / "README.md").read_text()
    assert "\n## Data\n" in readme and "trec_dl = " in readme


def test_names_bare_imported_and_at_computed(cache, tiny):
    """bm25 = the data folder's imported full-corpus run; bm25@computed = computed here (partial corpus);
    a computable bare name without an imported run is computed and then reported as NAME@computed."""
    from pipeline.retrieval import retrievers
    from pipeline.retrieval.errors import RetrievalError

    (tiny / "runs" / "run.bm25.dl19.txt").write_text(_run_lines(ALPHA_RANKS, "bm25"))
    data = load_dataset("dl19", tiny)
    # a computed bm25 run already in the cache (as `pipeline retrieve` leaves it), so no index is built here
    settings = {"k1": 0.9, "b": 0.4, "depth": 1000}
    stem = f"bm25-{retrievers._run_key(data, 'bm25', settings)}"
    _write_computed(cache, "dl19", stem, _run_lines(BETA_RANKS, "irdash-bm25"),
                    {**_computed_meta("dl19", "bm25", 14), "settings": settings})
    bare = get_run(data, "bm25")
    assert (bare.name, bare.kind) == ("bm25", "imported") and "full-corpus" in bare.provenance
    computed = get_run(data, "bm25@computed")
    assert (computed.name, computed.kind) == ("bm25@computed", "computed") and computed.path.stem == stem
    (tiny / "runs" / "run.bm25.dl19.txt").unlink()
    fallback = get_run(load_dataset("dl19", tiny), "bm25")
    assert (fallback.name, fallback.kind) == ("bm25@computed", "computed")
    with pytest.raises(RetrievalError, match="only bm25@computed, dense@computed"):
        get_run(data, "alpha@computed")


def test_page_shared_dl19_agrees_with_pipeline_h2r(cache, shared_dir, monkeypatch):
    folder = shared_dir / "data" / "trec_dl"
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(folder))
    data = load_dataset("dl19", folder)
    expected = {name: h2r.hard_to_retrieve(evaluation.per_query(data.qrels, get_run(data, name).run, complete=True),
                                           0.25, name) for name in ("bm25", "tasb")}
    at = _page()
    coverage = at.dataframe[0].value.set_index("what")
    assert coverage.loc["judged queries (topics with qrels)", "count"] == 43
    assert coverage.loc["judged passages with text", "share"] == 1.0
    retrievers = at.dataframe[1].value.set_index("retriever")
    assert retrievers.index.tolist() == ["bm25", "tasb"]
    assert all(p.startswith("imported full-corpus run") for p in retrievers["provenance"])
    summary = at.dataframe[2].value.set_index("retriever")
    assert summary.loc["bm25", "H2R queries"] == len(expected["bm25"].qids) == 11
    assert summary.loc["tasb", "H2R queries"] == len(expected["tasb"].qids)
    assert summary.loc["bm25", "H2R mean NDCG@10"] == pytest.approx(expected["bm25"].mean)
    assert summary.loc["bm25", "mean NDCG@10"] == pytest.approx(0.5058, abs=5e-5)
    both = overlap.intersection(expected.values())
    assert at.metric[0].value == f"{len(both)} queries"
    table = at.dataframe[3].value
    assert len(table) == 43 and sorted(table["qid"][table["hard under both"]]) == both
    assert dict(zip(table["qid"], table["query"])) == data.queries()


def test_page_shared_partial_and_unjudged_years(cache, shared_dir, monkeypatch):
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(shared_dir / "data" / "trec_dl"))
    at = _page()
    at.selectbox[0].set_value("dl20").run()
    assert not at.exception
    assert "Partial passage texts" in _texts(at)
    at.selectbox[0].set_value("dl22").run()
    assert not at.exception
    assert "No qrels for dl22" in _texts(at)
    assert at.dataframe[1].value["retriever"].tolist() == ["bm25"]
    assert not at.slider and not at.get("plotly_chart")
