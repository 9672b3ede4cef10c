"""Dataset registry and loading: coverage of the shared data folder, missing qrels, bad files."""
from __future__ import annotations

import shutil

import pytest

from pipeline.data.datasets import DatasetError, load_dataset
from pipeline.data.trec_io import TrecFormatError


def test_dl19_coverage_is_complete(shared_dir):
    data = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    cov = data.coverage
    assert (cov.n_topics, cov.n_judged_queries) == (43, 43)
    # the README: the v1 file covers all 9,139 judged DL19 passages
    assert cov.n_judged_passages == cov.n_judged_passages_with_text == 9139
    assert cov.n_judged_pairs == 9260 and cov.n_relevant_passages_with_text == cov.n_relevant_passages
    assert len(data.judged_pairs(with_text=True)) == 9260
    qid = data.judged_qids[0]
    relevant = data.relevant_passages(qid)
    assert relevant and all(data.qrels[qid][pid] >= 2 for pid in relevant)
    assert set(data.imported_runs()) == {"bm25", "tasb"}


def test_dl20_is_partial_and_only_judged_queries_count(shared_dir):
    data = load_dataset("dl20", shared_dir / "data" / "trec_dl")
    cov = data.coverage.as_dict()
    assert cov["n_topics"] == 200 and cov["n_judged_queries"] == 54
    assert list(data.queries()) == data.judged_qids and len(data.queries()) == 54
    assert round(cov["frac_judged_passages_with_text"], 3) == 0.447  # README: 44.7%
    assert round(cov["frac_relevant_passages_with_text"], 3) == 0.660  # README: 66.0%
    assert len(data.judged_pairs(with_text=True)) < len(data.judged_pairs())


def test_dl22_without_qrels_says_so(shared_dir):
    data = load_dataset("dl22", shared_dir / "data" / "trec_dl")
    assert not data.has_qrels and len(data.queries()) == 500
    with pytest.raises(DatasetError, match=r"dl22: no qrels available: .*qrels.dl22-passage.txt is absent"):
        data.require_qrels()


def test_unknown_dataset_and_missing_folder(tmp_path):
    with pytest.raises(DatasetError, match="unknown dataset 'dl18'"):
        load_dataset("dl18", tmp_path)
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset("dl19", tmp_path / "nowhere")
    with pytest.raises(DatasetError, match="topics file .* is absent"):
        load_dataset("dl19", tmp_path)


def test_bad_files_fail_with_line_and_nothing_stays_cached(tmp_path):
    (tmp_path / "topics.dl19-passage.txt").write_text("1\tfirst query\n2\tsecond query\n")
    (tmp_path / "qrels.dl19-passage.txt").write_text("1 0 p1 2\n2 0 p2 0\n")
    passages = tmp_path / "passages.msmarco-v1.dl19-dl20.tsv"
    passages.write_text("pid\tjudged_in\ttext\np1\tdl19\tone\np1\tdl19\tagain\n")
    with pytest.raises(TrecFormatError, match=r"passages.msmarco-v1.dl19-dl20.tsv:3: duplicate passage id p1"):
        load_dataset("dl19", tmp_path)
    passages.write_text("pid\tjudged_in\ttext\np1\tdl19\tone\np2\tdl19\ttwo\n")
    data = load_dataset("dl19", tmp_path)  # the fixed file is read, not a cached half-load
    assert data.coverage.n_judged_passages_with_text == 2 and data.relevant_passages("1") == {"p1": "one"}
    (tmp_path / "qrels.dl19-passage.txt").write_text("1 0 p1 2\n3 0 p2 0\n")
    with pytest.raises(TrecFormatError, match=r"qrels.dl19-passage.txt:2: unknown query id 3"):
        load_dataset("dl19", tmp_path)


def test_configured_data_folder_is_used(shared_dir, tmp_path, monkeypatch):
    folder = tmp_path / "trec"
    folder.mkdir()
    shutil.copy(shared_dir / "data" / "trec_dl" / "topics.dl19-passage.txt", folder)
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(folder))
    data = load_dataset("dl19")
    assert data.folder == folder and not data.has_qrels and data.coverage.n_corpus_passages == 0
