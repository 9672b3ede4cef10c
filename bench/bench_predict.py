"""Query-performance predictors, batched (plain script: prints numbers, writes a JSON record).

    python bench/bench_predict.py [--data DIR] [--repeats 3] [--out bench/results/bench_predict.json]

Every predictor (8 pre-retrieval, 6 post-retrieval per run) for DL19, DL20 and DL21 and all their
imported runs (the data folder's ``runs/``: BM25 for all three, TAS-B for DL19 and DL20), over every
topic of each year (43 + 200 + 477 queries: more than the judged ones, so the batch is the largest the
study meets). Two phases:

- cold: the first pass in a fresh process (JVM start, index builds when the cache has none, index opens);
- warm: the index already open (what a second command in a long-lived process, or the page's job
  worker, meets), with each index's term-count memo cleared so every term is looked up in Lucene again,
  and every run file read and parsed again. The figure is the best and the median of ``--repeats``.

Wall and CPU seconds are reported with the machine's 1-minute load average and core count: on a shared
machine the CPU figure is the load-independent one.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DATASETS = ("dl19", "dl20", "dl21")


def cpu_seconds() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def every_predictor(collections, indexes) -> dict:
    """All predictors of all datasets and runs; returns counts (queries, runs, values)."""
    from pipeline.data.trec_io import read_run
    from pipeline.predict import catalog

    counts = {"queries": 0, "runs": 0, "values": 0}
    for data in collections:
        topics = dict(data.topics)  # every topic, judged or not
        stats = indexes[data.name]
        terms = stats.term_matrix(topics)
        lengths = terms.lengths()  # WIG's |q|: the analyzed length
        for pv in catalog.pre_retrieval_values(terms, partial_corpus=stats.partial):
            counts["values"] += len(pv.values)
        counts["queries"] += len(topics)
        for name, path in sorted(data.imported_runs().items()):
            run = read_run(path)
            for pv in catalog.post_retrieval_values(name, run, lengths):
                counts["values"] += len(pv.values)
            counts["runs"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=None, help="TREC DL data folder (default ../shared/data/trec_dl)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="write the record as JSON here")
    args = parser.parse_args()
    from pipeline.data.datasets import load_dataset
    from pipeline.predict.index_stats import open_index, resolve_index

    data_dir = args.data or str(Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_dl")
    load_cold = os.getloadavg()[0]
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    collections = [load_dataset(d, data_dir) for d in DATASETS]
    indexes = {d.name: open_index(d, resolve_index(d.name)) for d in collections}
    counts = every_predictor(collections, indexes)
    cold = {"wall_s": time.perf_counter() - wall0, "cpu_s": cpu_seconds() - cpu0, "load_1min": load_cold}
    print(f"cold (data, JVM, indexes, every predictor): {cold['wall_s']:.2f} s wall, {cold['cpu_s']:.2f} CPU-s, "
          f"load {load_cold:.2f}")
    warm = []
    for _ in range(args.repeats):
        for stats in indexes.values():
            stats._counts.clear()  # every term looked up in Lucene again
        load = os.getloadavg()[0]
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        every_predictor(collections, indexes)
        warm.append({"wall_s": time.perf_counter() - wall0, "cpu_s": cpu_seconds() - cpu0, "load_1min": load})
        print(f"warm: {warm[-1]['wall_s']:.3f} s wall, {warm[-1]['cpu_s']:.3f} CPU-s, load {load:.2f}")
    walls = [w["wall_s"] for w in warm]
    record = {"datasets": list(DATASETS), **counts, "cores": len(os.sched_getaffinity(0)), "cold": cold,
              "warm": warm, "warm_best_s": min(walls), "warm_median_s": statistics.median(walls),
              "target_s": 30, "within_target": max(walls) <= 30,
              "index": {d: s.as_dict()["description"] for d, s in indexes.items()},
              "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(f"{counts['queries']} queries, {counts['runs']} runs, {counts['values']} predictor values; warm best "
          f"{min(walls):.3f} s, median {statistics.median(walls):.3f} s on {record['cores']} cores "
          f"(target 30 s: {'met' if record['within_target'] else 'NOT met'})")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
