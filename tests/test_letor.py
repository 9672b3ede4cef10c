"""LETOR reader, its error messages, the binary cache and query-level normalisation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.paths import cache_subdir
from ltr.data import letor
from ltr.data.cache import load_cached
from ltr.data.letor import LetorFormatError, query_minmax, read_letor

SAMPLE = """\
# a comment line before the data
2 qid:7 1:0.5 3:1.25 #docid = D1 inc = 1
0 qid:7 2:-1 3:4e-1 # docid = D2

1 qid:3 1:1 2:2 3:3 #docid=D3
0 qid:9 1:0
0 qid:9 2:0.5   #docid = D5
"""


def write(tmp_path: Path, text: str, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_parses_queries_labels_features_and_docids(tmp_path):
    ds = read_letor(write(tmp_path, SAMPLE))
    assert ds.qids == ["7", "3", "9"]
    assert ds.query_ptr.tolist() == [0, 2, 3, 5]
    assert ds.labels.tolist() == [2, 0, 1, 0, 0]  # the all-zero query 9 is kept
    assert ds.features.dtype == np.float32 and ds.features.shape == (5, 3)
    np.testing.assert_allclose(ds.features, [[0.5, 0, 1.25], [0, -1, 0.4], [1, 2, 3], [0, 0, 0], [0, 0.5, 0]])
    assert ds.doc_ids.tolist() == ["D1", "D2", "D3", "", "D5"]
    assert ds.list_lengths().tolist() == [2, 1, 2]


def test_n_features_sets_the_width(tmp_path):
    ds = read_letor(write(tmp_path, SAMPLE), n_features=5)
    assert ds.n_features == 5 and ds.features.shape == (5, 5) and not ds.features[:, 3:].any()


def test_subset_keeps_the_queries_in_the_given_order(tmp_path):
    ds = read_letor(write(tmp_path, SAMPLE))
    sub = ds.subset([2, 0])
    assert sub.qids == ["9", "7"] and sub.query_ptr.tolist() == [0, 2, 4]
    np.testing.assert_array_equal(sub.features, ds.features[[3, 4, 0, 1]])
    assert sub.doc_ids.tolist() == ["", "D5", "D1", "D2"]


@pytest.mark.parametrize("text, line, needle", [
    ("1 qid:1 1:0.5\n0 1:0.2 2:0.1\n", 2, "missing qid"),
    ("1 qid:1 1:0.5\n0 qid:1 1:abc\n", 2, "not a number"),
    ("x qid:1 1:0.5\n", 1, "label 'x' is not a number"),
    ("1 qid:1 1:0.5\n\n0 qid:1 1:nan\n", 3, "not finite"),
    ("1 qid:1 1:inf 2:1\n", 1, "not finite"),
    ("1 qid:1 1:1e39\n", 1, "not finite"),
    ("nan qid:1 1:1\n", 1, "label 'nan' is not finite"),
    ("-1 qid:1 1:1\n", 1, "negative"),
    ("1 qid:1 0:1\n", 1, "out of range"),
    ("1 qid:1 2:1 1:1\n", 1, "must increase"),
    ("1 qid:1 1:1\n1 qid:a 1:1\n", 2, "not an integer"),
    ("1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n", 3, "qid 1 reappears after other queries (first seen at line 1"),
])
def test_bad_lines_name_file_line_and_problem(tmp_path, text, line, needle):
    path = write(tmp_path, text)
    with pytest.raises(LetorFormatError) as err:
        read_letor(path)
    assert err.value.line_no == line
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert needle in str(err.value)


def test_feature_index_beyond_n_features(tmp_path):
    path = write(tmp_path, "1 qid:1 1:1 46:1\n0 qid:1 1:1 47:0.5\n")
    assert read_letor(path).n_features == 47
    with pytest.raises(LetorFormatError, match=r":2: feature index 47 out of range \(the dataset has 46 features\)"):
        read_letor(path, n_features=46)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(tmp_path, text):
    with pytest.raises(LetorFormatError, match="empty file"):
        read_letor(write(tmp_path, text))


def _random_letor(rng, n_queries=60, n_features=12) -> str:
    lines = []
    for q in range(n_queries):
        for d in range(rng.integers(1, 9)):
            present = np.flatnonzero(rng.random(n_features) < 0.7) + 1
            feats = " ".join(f"{i}:{rng.normal():.4f}" for i in present)
            lines.append(f"{rng.integers(0, 5)} qid:{1000 + q} {feats} #docid = q{q}d{d}")
    return "\n".join(lines) + "\n"


def test_chunked_parallel_parse_equals_single_chunk(tmp_path, monkeypatch):
    path = write(tmp_path, _random_letor(np.random.default_rng(0)))
    whole = read_letor(path, n_features=12)
    monkeypatch.setattr(letor, "CHUNK_BYTES", 700)  # many chunks, cut mid-line, several processes
    chunked = read_letor(path, n_features=12)
    np.testing.assert_array_equal(chunked.features, whole.features)
    np.testing.assert_array_equal(chunked.labels, whole.labels)
    np.testing.assert_array_equal(chunked.query_ptr, whole.query_ptr)
    assert chunked.qids == whole.qids and chunked.doc_ids.tolist() == whole.doc_ids.tolist()
    assert whole.n_queries == 60


def test_error_in_a_later_chunk_reports_the_global_line(tmp_path, monkeypatch):
    lines = _random_letor(np.random.default_rng(1)).splitlines()
    bad = len(lines) - 3
    lines[bad] = lines[bad].replace(" qid:", " 3:x qid:", 1)  # garbage token before the qid
    path = write(tmp_path, "\n".join(lines) + "\n")
    monkeypatch.setattr(letor, "CHUNK_BYTES", 700)
    with pytest.raises(LetorFormatError) as err:
        read_letor(path)
    assert err.value.line_no == bad + 1 and "missing qid" in str(err.value)


def test_matches_sklearn_on_real_mq2008(shared_dir):
    from sklearn.datasets import load_svmlight_file

    path = shared_dir / "data" / "letor" / "mq2008_fold1_test.txt"
    ds = read_letor(path, n_features=46)
    X, y, qid = load_svmlight_file(str(path), query_id=True, zero_based=False, n_features=46)
    assert (ds.n_queries, ds.n_documents) == (156, 2874)
    np.testing.assert_allclose(ds.features, X.toarray(), rtol=1e-6)
    np.testing.assert_array_equal(ds.labels, y)
    assert np.bincount(ds.labels.astype(int)).tolist() == [2319, 378, 177]
    assert ds.qids == [str(q) for q in dict.fromkeys(qid)]
    assert ds.doc_ids[0] == "GX004-93-7097963" and (ds.doc_ids != "").all()


def _entries() -> list[Path]:
    return [p for p in cache_subdir("letor").iterdir() if p.is_dir() and p.name != "digests"]


def test_cache_hits_by_content_and_never_stores_failures(tmp_path):
    before = set(_entries())
    path = write(tmp_path, SAMPLE, "a.txt")
    first = load_cached(path)
    new = set(_entries()) - before
    assert len(new) == 1 and not any(p.name.startswith(".tmp") for p in new)
    again = load_cached(write(tmp_path, SAMPLE, "copy.txt"))  # same bytes elsewhere: same entry
    assert set(_entries()) - before == new
    assert not again.features.flags.writeable  # memory-mapped from the cache
    for a, b in ((first.features, again.features), (first.labels, again.labels), (first.query_ptr, again.query_ptr)):
        np.testing.assert_array_equal(a, b)
    assert again.qids == first.qids and again.doc_ids.tolist() == first.doc_ids.tolist()

    normalised = load_cached(path, query_normalise=True)  # its own entry
    np.testing.assert_array_equal(normalised.features, query_minmax(first.features, first.query_ptr))
    assert len(set(_entries()) - before) == 2

    path.write_text(SAMPLE.replace("2 qid:7", "1 qid:7"))  # edited: a new entry, new labels
    assert load_cached(path).labels[0] == 1
    assert len(set(_entries()) - before) == 3

    bad = write(tmp_path, SAMPLE + "1 qid:9 1:nan\n", "bad.txt")
    with pytest.raises(LetorFormatError):
        load_cached(bad)
    assert len(set(_entries()) - before) == 3
    assert not [p for p in cache_subdir("letor").iterdir() if p.name.startswith(".tmp")]


def test_query_minmax_per_query_and_feature():
    x = np.array([[1, 5], [3, 5], [2, 5], [10, -1], [20, 1]], dtype=np.float32)
    out = query_minmax(x, np.array([0, 3, 5]))
    np.testing.assert_allclose(out, [[0, 0], [1, 0], [0.5, 0], [0, 0], [1, 1]])  # constant -> 0
