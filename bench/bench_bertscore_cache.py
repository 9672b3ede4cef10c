"""Two generators' H2G on DL19 (minilm), first against second: what the reference embedding cache
saves (issue 26; plain script: prints numbers and the ratio).

    python bench/bench_bertscore_cache.py [--data DIR] [--dataset dl19] [--encoder minilm]

In a fresh temporary cache (no pair scores, no reference embeddings): two answer sets imported as
``NAME=FILE.jsonl`` (no LLM needed) -- the text of each query's first and of its second BM25 passage
(``runs/run.bm25.<dataset>.txt`` of the data folder) -- are scored one after the other through
``pipeline.study.tasks.h2g.h2g_sets``, as two ``h2g`` commands would. The encoder is loaded before the
clock starts, so both figures are scoring alone. Wall and CPU seconds of each, the ratio
second/first, the torch threads and the load average are printed: on a shared machine wall seconds
are noisy, CPU seconds less so.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def answer_files(data, folder: Path, out: Path) -> list[str]:
    """``NAME=FILE`` of two answer sets: the first and the second BM25 passage of every judged query."""
    from pipeline.data.trec_io import read_run

    run = read_run(Path(data.folder) / "runs" / f"run.bm25.{data.name}.txt")
    specs = []
    for rank, name in ((0, "bm25-first"), (1, "bm25-second")):
        path = out / f"{name}.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for qid in data.queries():
                ranked = [pid for pid, _ in sorted(run.get(qid, {}).items(), key=lambda kv: -kv[1])
                          if pid in data.passages]
                if len(ranked) > rank:
                    fh.write(json.dumps({"qid": qid, "text": data.passages[ranked[rank]]}) + "\n")
        specs.append(f"{name}={path}")
    return specs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "trec_dl"))
    parser.add_argument("--dataset", default="dl19")
    parser.add_argument("--encoder", default="minilm")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-bertscore-"))
    os.environ["IRDASH_CACHE_DIR"] = str(work / "cache")  # cold caches, before anything reads the config

    from pipeline.generation.bertscore import _scorer, resolve_encoder
    from pipeline.llm.cpu import step_threads
    from pipeline.study.config import StudyConfig, load_collection
    from pipeline.study.tasks.h2g import h2g_sets

    data = load_collection(args.dataset, data_dir=args.data)
    generators = answer_files(data, Path(args.data), work)
    _scorer(resolve_encoder(args.encoder))  # load the encoder outside the clock
    figures = []
    for spec in generators:
        load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        out = h2g_sets(StudyConfig.of(data, generators=[spec], encoder=args.encoder), progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        (result,) = out["generators"].values()
        n_pairs = sum(len(data.relevant_passages(q)) for q in result["per_query"])
        figures.append({"generator": spec.split("=")[0], "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                        "queries": len(result["per_query"]), "pairs": n_pairs, "load_average": round(load, 1)})
        print(f"{figures[-1]['generator']}: {wall:.1f} s wall, {cpu:.1f} s CPU, {len(result['per_query'])} queries, "
              f"{n_pairs} pairs, load {load:.1f}", flush=True)
    first, second = figures
    summary = {"dataset": data.name, "encoder": args.encoder, "torch_threads": step_threads(), "runs": figures,
               "ratio_wall": round(second["wall_s"] / first["wall_s"], 3),
               "ratio_cpu": round(second["cpu_s"] / first["cpu_s"], 3)}
    print(f"second / first: {summary['ratio_wall']:.3f} wall, {summary['ratio_cpu']:.3f} CPU "
          f"({summary['torch_threads']} torch thread(s))")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
