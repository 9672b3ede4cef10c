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


def test_cache_hits_by_content_and_never_stores_failures(tmp_path, monkeypatch):
    # a cache of its own: an entry another test made from the same bytes would already be there
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
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


# ------------------------------------------------- dense fast path == scikit-learn path, bit for bit
def _dense_letor(rng, n_queries=40, n_features=9) -> str:
    """Dense lines whose values stress the float parsing: integers (beyond 2^24 and 2^53), many
    digits, exponents, -0, subnormals, values near the float32 limit; comments on some lines."""
    pool = ["0", "-0", "7", "16777217", "9007199254740993", "123456789012345678", "0.1", "-2.5e-3",
            "3.4028234e38", "-3.4028234663852886e+38", "1e-45", "2.2250738585072014e-308",
            "1.00000005960464477539062500001", "0.333333333333333314829616256247390992939472198486328125"]
    lines = ["# header comment", ""]
    for q in range(n_queries):
        for d in range(rng.integers(1, 6)):
            values = [pool[i] if rng.random() < 0.5 else f"{rng.normal() * 10.0 ** rng.integers(-8, 9):.{rng.integers(1, 18)}g}"
                      for i in rng.integers(0, len(pool), n_features)]
            feats = " ".join(f"{i + 1}:{v}" for i, v in enumerate(values))
            tail = rng.choice(["", " ", f" #docid = q{q}d{d} inc = 1", " # no id"])
            lines.append(f"{rng.choice(['0', '-0', '1', '2.0', '4'])} qid:{-5 + 37 * q} {feats}{tail}")
    return "\n".join(lines) + "\n"


def _assert_identical(a, b) -> None:
    for x, y in ((a.features, b.features), (a.labels, b.labels), (a.query_ptr, b.query_ptr)):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    assert a.qids == b.qids and a.n_features == b.n_features
    assert (a.doc_ids is None) == (b.doc_ids is None)
    if a.doc_ids is not None:
        assert a.doc_ids.tolist() == b.doc_ids.tolist()


def _both_paths(path: Path, n_features, monkeypatch):
    """read_letor as is, and with the dense fast path switched off (scikit-learn for every chunk)."""
    data = path.read_bytes()
    assert letor._parse_dense(data, n_features) is not None  # the file really takes the fast path
    fast = read_letor(path, n_features)
    with monkeypatch.context() as m:
        m.setattr(letor, "_parse_dense", lambda data, n_features: None)
        general = read_letor(path, n_features)
    return fast, general


def test_dense_fast_path_is_bit_identical_on_real_mq2008(shared_dir, monkeypatch):
    fast, general = _both_paths(shared_dir / "data" / "letor" / "mq2008_fold1_test.txt", 46, monkeypatch)
    _assert_identical(fast, general)
    assert fast.n_documents == 2874 and (fast.doc_ids != "").all()


@pytest.mark.parametrize("seed, n_features", [(0, None), (1, 12)])
def test_dense_fast_path_is_bit_identical_on_synthetic_files(tmp_path, monkeypatch, seed, n_features):
    path = write(tmp_path, _dense_letor(np.random.default_rng(seed)))
    fast, general = _both_paths(path, n_features, monkeypatch)
    _assert_identical(fast, general)
    assert fast.n_features == (n_features or 9) and not fast.features[:, 9:].any()
    assert (fast.features == 16777216).any() and not np.signbit(fast.features[fast.features == 0]).any()


def test_sparse_or_irregular_chunks_fall_back_per_chunk(tmp_path, monkeypatch):
    text = _dense_letor(np.random.default_rng(2)).splitlines()
    text[len(text) // 2] = "3 qid:99999 2:0.5 7:1.5"  # one sparse line in the middle
    text[-1] = text[-1].replace(" ", "  ", 1)  # a double space
    path = write(tmp_path, "\n".join(text) + "\n")
    monkeypatch.setattr(letor, "CHUNK_BYTES", 2000)
    data = path.read_bytes()
    taken = [letor._parse_dense(data[a:b], None) is not None for a, b in letor._chunk_bounds(path, len(data))]
    assert not all(taken) and sum(taken) >= len(taken) - 2  # only the two odd chunks fall back
    fast = read_letor(path)
    monkeypatch.setattr(letor, "_parse_dense", lambda data, n_features: None)
    _assert_identical(fast, read_letor(path))


@pytest.mark.parametrize("text, line, needle", [
    ("1 qid:1 1:1 2:1\n0 qid:1 1:1 2:inf\n", 2, "not finite"),
    ("1 qid:1 1:1 2:1\n0 qid:1 1:1 3:1\n", 2, "feature index 3 out of range (the dataset has 2 features)"),
    ("1 qid:1 1:1 2:1\n0 qid:1 2:1 1:1\n", 2, "must increase"),
    ("1 qid:1 1:1 2:1\n1 qid:1.5 1:1 2:1\n", 2, "not an integer"),
])
def test_dense_files_with_a_bad_line_get_the_precise_error(tmp_path, text, line, needle):
    with pytest.raises(LetorFormatError) as err:
        read_letor(write(tmp_path, text), n_features=2)
    assert err.value.line_no == line and needle in str(err.value)
