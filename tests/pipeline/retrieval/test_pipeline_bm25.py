"""Real pyserini BM25: an Anserini index of a few hundred shared passages, searched in-process."""
from __future__ import annotations

import json
import math

import pytest

from core import paths
from pipeline.retrieval import bm25
from pipeline.data import trec_io
from pipeline.retrieval.retrievers import RetrievalError

pytestmark = pytest.mark.slow

UNIQUE = "zyxquor"  # a token no MS MARCO passage has


@pytest.fixture(scope="module")
def passages():
    from tests.support.paths import SHARED

    path = SHARED / "data" / "trec_dl" / "passages.msmarco-v1.dl19-dl20.tsv"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    texts = dict(list(trec_io.read_passages(path).items())[:300])
    texts["own-1"] = f"{UNIQUE} appears once here"
    texts["own-2"] = f"{UNIQUE} {UNIQUE} appears twice here"
    return texts


@pytest.fixture(scope="module")
def index(passages):
    return bm25.build_index(passages)


def test_index_is_built_once_per_content(passages, index):
    meta = json.loads((index / "meta.json").read_text())
    assert meta["n_passages"] == len(passages)
    assert index.parent == paths.cache_subdir("bm25")
    stamp = (index / "meta.json").stat().st_mtime_ns
    assert bm25.build_index(passages) == index
    assert (index / "meta.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert not list(index.parent.glob(".building-*"))
    changed = dict(passages, **{"own-1": "different text"})
    assert bm25.index_key(bm25.passages_fingerprint(changed)) != bm25.index_key(meta["passages_fingerprint"])
    with pytest.raises(RetrievalError, match="no passages"):
        bm25.build_index({})


def test_a_passage_is_found_by_its_own_words(passages, index):
    chosen = [pid for pid, text in passages.items() if len(text.split()) > 30][:5]
    queries = {f"q{pid}": " ".join(passages[pid].split()[:30]) for pid in chosen}
    run = bm25.search(index, queries, bm25.BM25Settings(depth=10), progress=False)
    for pid in chosen:
        ranked = sorted(run[f"q{pid}"], key=run[f"q{pid}"].get, reverse=True)
        assert ranked[0] == pid


def test_scores_follow_lucene_bm25(passages, index):
    k1 = 0.9
    # b = 0 removes length normalisation: score = idf * tf / (tf + k1), idf = ln(1 + (N - n + .5) / (n + .5))
    run = bm25.search(index, {"u": UNIQUE}, bm25.BM25Settings(k1=k1, b=0.0), progress=False)
    assert set(run["u"]) == {"own-1", "own-2"}
    n_docs, n_with = len(passages), 2
    idf = math.log(1 + (n_docs - n_with + 0.5) / (n_with + 0.5))
    # Anserini rounds scores to 4 decimals (then float32)
    assert run["u"]["own-1"] == pytest.approx(idf * 1 / (1 + k1), abs=6e-5)
    assert run["u"]["own-2"] == pytest.approx(idf * 2 / (2 + k1), abs=6e-5)
    default = bm25.search(index, {"u": UNIQUE}, progress=False)  # b = 0.4: length matters now
    assert default["u"]["own-1"] != pytest.approx(run["u"]["own-1"], abs=1e-3)
