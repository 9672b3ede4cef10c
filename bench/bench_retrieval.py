"""Retrieval benchmark on the shared TREC DL data (plain script: prints numbers).

    python bench/bench_retrieval.py [--data DIR] [--dense-passages 2048 | --dense-full]

Measures, in a fresh temporary cache (cold builds):
- Anserini indexing of the MS MARCO v1 passages file (34,169 passages): seconds and passages/s;
- BM25 search of the DL19 + DL20 judged queries (97): queries/s at depth 1000 and 100 (JVM warm);
- dense (packaged MiniLM) passage encoding passages/s on a subset (extrapolated to the full file,
  labelled as such) or on the whole file with --dense-full; query encoding + faiss search queries/s;
- the full H2R computation for DL19 + DL20 (load data, read the imported BM25 and TAS-B runs,
  per-query NDCG@10, H2R sets, intersection), cold process state.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Clock:
    """Wall seconds and CPU seconds (this process, all threads, plus finished children such as the
    Java indexer): on a shared machine the CPU figure is the load-independent one."""

    def __enter__(self):
        self.wall0, self.cpu0 = time.perf_counter(), self._cpu()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall0, self._cpu() - self.cpu0

    @staticmethod
    def _cpu() -> float:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    def rate(self, n: int, unit: str) -> str:
        return (f"{self.wall:.2f} s wall = {n / self.wall:,.1f} {unit}/s "
                f"({self.cpu:.2f} CPU-s = {n / self.cpu:,.1f} {unit} per CPU-s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=None, help="TREC DL data folder (default ../shared/data/trec_dl)")
    parser.add_argument("--dense-passages", type=int, default=2048)
    parser.add_argument("--dense-full", action="store_true")
    args = parser.parse_args()

    os.environ["IRDASH_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-retrieval-")
    from core import paths

    folder = Path(args.data) if args.data else (paths.shared_data_dir() or Path("missing")) / "trec_dl"
    if not folder.is_dir():
        sys.exit(f"no TREC DL data folder at {folder} (pass --data)")

    import torch

    print(f"# cache {paths.cache_dir()}; cpus {os.cpu_count()}; torch threads {torch.get_num_threads()}")

    # --- H2R first, while the process is cold (what a fresh CLI call pays) ---
    with Clock() as clock:
        from pipeline.data.datasets import load_dataset
        from pipeline.retrieval.h2r import h2r_report
        from pipeline.retrieval.retrievers import get_run

        for name in ("dl19", "dl20"):
            data = load_dataset(name, folder)
            report = h2r_report(data, [get_run(data, "bm25"), get_run(data, "tasb")])
            summary = ", ".join(f"{r}: mean {v['mean']:.4f}, H2R {v['n_hard']} q mean {v['hard_mean']:.4f}"
                                for r, v in report["retrievers"].items())
            print(f"{name}: {summary}; hard under both: {len(report['intersection'])}")
    print(f"H2R DL19+DL20 (imported BM25+TAS-B runs, incl. imports and loading data): "
          f"{clock.wall:.2f} s wall, {clock.cpu:.2f} CPU-s")

    # --- BM25 ---
    from pipeline.retrieval import bm25, java

    dl19, dl20 = load_dataset("dl19", folder), load_dataset("dl20", folder)
    passages = dl19.passages
    with Clock() as clock:
        index = bm25.build_index(passages, fingerprint=dl19.passages_fingerprint, threads=2)
    print(f"BM25 indexing of {len(passages):,} passages (JsonCollection write + Anserini IndexCollection, "
          f"2 threads): {clock.rate(len(passages), 'passages')}")
    with Clock() as clock:
        java.start_jvm()
        java.lucene_searcher_class()
    print(f"JVM start + pyserini import: {clock.wall:.1f} s wall, {clock.cpu:.1f} CPU-s")
    queries = {**dl19.queries(), **dl20.queries()}
    bm25.search(index, dict(list(queries.items())[:8]), progress=False)  # JIT warm-up
    for depth in (1000, 100, 10):
        with Clock() as clock:
            bm25.search(index, queries, bm25.BM25Settings(depth=depth), progress=False)
        print(f"BM25 search of {len(queries)} queries, depth {depth}: {clock.rate(len(queries), 'queries')}")

    # --- dense (packaged MiniLM) ---
    from pipeline.retrieval import dense

    with Clock() as clock:
        spec, encoder = dense.load_encoder("minilm")
    print(f"dense model load ({spec.key}): {clock.wall:.1f} s wall")
    subset = passages if args.dense_full else dict(list(passages.items())[:args.dense_passages])
    with Clock() as clock:
        _, _, index, pids = dense.build_index(subset, "minilm", progress=False)
    label = "the full file" if len(subset) == len(passages) else \
        (f"a subset; extrapolated to all {len(passages):,}: ~{len(passages) / len(subset) * clock.wall / 60:.0f} min "
         f"wall at this rate, ~{len(passages) / len(subset) * clock.cpu / 60:.0f} CPU-min")
    print(f"dense encode of {len(subset):,} passages ({label}): {clock.rate(len(subset), 'passages')}")
    with Clock() as clock:
        dense.search(subset, queries, "minilm", depth=1000, progress=False)
    print(f"dense search of {len(queries)} queries (encode + faiss IndexFlatIP over {index.ntotal:,}): "
          f"{clock.rate(len(queries), 'queries')}")
    import faiss
    import numpy as np

    full = faiss.IndexFlatIP(index.d)
    full.add(np.random.default_rng(0).standard_normal((len(passages), index.d), dtype=np.float32))
    q = np.random.default_rng(1).standard_normal((len(queries), index.d), dtype=np.float32)
    t0 = time.perf_counter()
    full.search(q, 1000)
    print(f"faiss IndexFlatIP search alone at full size ({len(passages):,} x {index.d}, random vectors): "
          f"{len(queries) / (time.perf_counter() - t0):,.0f} queries/s")


if __name__ == "__main__":
    import shutil

    try:
        main()
    finally:
        if "bench-retrieval-" in os.environ.get("IRDASH_CACHE_DIR", ""):
            shutil.rmtree(os.environ["IRDASH_CACHE_DIR"], ignore_errors=True)
