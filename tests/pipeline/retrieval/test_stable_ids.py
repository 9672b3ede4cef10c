"""The retrieval caches' keys never change: a cached run or BM25 index is found under them. The
literals below were computed by the code before the digest moved to ``core.digest``; they are
reference values of stored cache keys and must never change."""
from __future__ import annotations

from types import SimpleNamespace

from pipeline.retrieval import bm25, retrievers


def test_a_cached_run_key_is_the_one_cached_runs_carry():
    data = SimpleNamespace(passages_fingerprint="f" * 64,
                           queries=lambda: {"104861": "what is «rain» – 雨?", "1037798": "café"})
    assert retrievers._run_key(data, "bm25", {"k1": 0.9, "b": 0.4, "depth": 1000}) == "af81a8e6d3d69cd2"


def test_a_bm25_index_key_is_the_one_cached_indexes_carry(tmp_path, monkeypatch):
    (tmp_path / "anserini-1.0.0-fatjar.jar").write_bytes(b"")  # the key names the jar: a fixed one here
    monkeypatch.setenv("ANSERINI_CLASSPATH", str(tmp_path))
    assert bm25.index_key("f" * 64) == "8c2837cca950659669124c21"
