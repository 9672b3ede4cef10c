"""Real dense retrieval with the packaged all-MiniLM-L6-v2 (no hub) and a faiss inner-product index."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.retrieval import dense
from pipeline.data import trec_io
from pipeline.retrieval.retrievers import RetrievalError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def passages():
    from tests.support.paths import SHARED

    path = SHARED / "data" / "trec_dl" / "passages.msmarco-v1.dl19-dl20.tsv"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return dict(list(trec_io.read_passages(path).items())[1000:1160])


def test_minilm_finds_a_passage_from_its_own_text(passages):
    chosen = list(passages)[::40]
    queries = {f"q{pid}": passages[pid] for pid in chosen}
    run = dense.search(passages, queries, "minilm", depth=5, progress=False)
    for pid in chosen:
        scores = run[f"q{pid}"]
        assert max(scores, key=scores.get) == pid
        assert scores[pid] == pytest.approx(1.0, abs=1e-4)  # cosine of a text with itself
        assert len(scores) == 5


def test_encoding_resumes_from_saved_shards(passages, monkeypatch):
    subset = dict(list(passages.items())[:96])
    monkeypatch.setattr(dense, "SHARD_SIZE", 32)
    real_encode, encoded = dense._encode, []

    def failing_on_second_shard(encoder, spec, texts, progress, batch_size):
        if encoded:
            raise KeyboardInterrupt
        encoded.append(len(texts))
        return real_encode(encoder, spec, texts, progress, batch_size)

    monkeypatch.setattr(dense, "_encode", failing_on_second_shard)
    with pytest.raises(KeyboardInterrupt):
        dense.build_index(subset, "minilm", progress=False)

    def counting(encoder, spec, texts, progress, batch_size):
        encoded.append(len(texts))
        return real_encode(encoder, spec, texts, progress, batch_size)

    monkeypatch.setattr(dense, "_encode", counting)
    spec, encoder, index, pids = dense.build_index(subset, "minilm", progress=False)
    assert encoded == [32, 32, 32]  # the interrupted run's first shard was kept
    assert pids == list(subset) and index.ntotal == 96
    direct = encoder.encode([subset[pids[50]]], normalize_embeddings=True)[0]
    np.testing.assert_allclose(index.reconstruct(50), direct, atol=1e-5)
    dense.build_index(subset, "minilm", progress=False)  # now cached: nothing encoded again
    assert encoded == [32, 32, 32]


def test_auto_falls_back_to_packaged_minilm(monkeypatch):
    real = dense._model_path

    def hub_unreachable(spec):
        if spec.hub_id is not None:
            raise RetrievalError("hub unreachable")
        return real(spec)

    monkeypatch.setattr(dense, "_model_path", hub_unreachable)
    assert dense.resolve_model("auto").key == "minilm"
    with pytest.raises(RetrievalError, match="hub unreachable"):
        dense.resolve_model("tasb")
    with pytest.raises(RetrievalError, match="unknown dense model"):
        dense.resolve_model("bert")


def test_computed_dense_run_has_provenance_and_is_cached(passages, shared_dir):
    from pipeline.data.datasets import load_dataset
    from pipeline.retrieval.retrievers import compute_run

    full = load_dataset("dl19", shared_dir / "data" / "trec_dl")
    data = type(full)(spec=full.spec, topics=full.topics, qrels=full.qrels, passages=passages, source="test")
    result = compute_run(data, "minilm", depth=20, progress=False)
    assert result.kind == "computed"
    assert result.provenance.startswith("computed here over a partial corpus (160 passages): all-MiniLM-L6-v2")
    assert set(result.run) == set(full.judged_qids) and all(len(r) == 20 for r in result.run.values())
    assert set().union(*result.run.values()) <= set(passages)
    stamp = result.path.stat().st_mtime_ns
    again = compute_run(data, "minilm", depth=20, progress=False)
    assert again.path == result.path and result.path.stat().st_mtime_ns == stamp and again.run == result.run
