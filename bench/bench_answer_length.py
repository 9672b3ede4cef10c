"""How many tokens a normal zero-shot answer takes: the evidence behind the answers' default length
(``pipeline.generation.answers.GENERATION_OPTIONS.max_tokens``). Plain script: prints numbers,
writes ``cache/bench/answer_length.json``.

    python bench/bench_answer_length.py [--model qwen2.5-coder-1.5b] [--queries 8] [--max-tokens 512]

The study's zero-shot prompt (:func:`pipeline.generation.answers.zero_shot_messages`) for the first
``--queries`` DL19 topics, greedy, through the embedded llama.cpp engine with a limit far above any
normal answer; for each answer the engine's own completion token count and finish reason. A default
length is one at which every measured answer finished (finish reason ``stop``), with room to spare.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from core import paths
    from core.atomic import atomic_write_text
    from pipeline.data.datasets import load_dataset
    from pipeline.generation.answers import GENERATION_OPTIONS, zero_shot_messages
    from pipeline.llm.backends.llamacpp import LlamaCppBackend
    from dataclasses import replace

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="embedded model key (pipeline.llm.gguf_models)")
    parser.add_argument("--dataset", default="dl19")
    parser.add_argument("--queries", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=512)
    args = parser.parse_args(argv)

    data = load_dataset(args.dataset)
    queries = list(data.queries().items())[:args.queries]
    backend = LlamaCppBackend(args.model, threads=int(os.environ.get("IRDASH_LLM_THREADS", "0")) or None)
    backend.prepare()
    options = replace(GENERATION_OPTIONS, max_tokens=args.max_tokens)
    rows = []
    for qid, query in queries:
        start = time.perf_counter()
        completion = backend.complete(zero_shot_messages(query), options)
        tokens = backend.last_usage.get("completion_tokens")
        rows.append({"qid": qid, "query": query, "tokens": tokens, "finish_reason": completion.finish_reason,
                     "seconds": round(time.perf_counter() - start, 1)})
        print(f"{qid}: {tokens} tokens, finish {completion.finish_reason}, {rows[-1]['seconds']} s  ({query})",
              flush=True)
    lengths = [r["tokens"] for r in rows]
    summary = {"model": args.model, "dataset": args.dataset, "n": len(rows), "max_tokens_sent": args.max_tokens,
               "current_default": GENERATION_OPTIONS.max_tokens, "max": max(lengths),
               "median": statistics.median(lengths), "mean": round(statistics.mean(lengths), 1),
               "cut_at_current_default": sum(t >= GENERATION_OPTIONS.max_tokens for t in lengths),
               "all_stopped": all(r["finish_reason"] == "stop" for r in rows),
               "load_average": os.getloadavg()[0], "answers": rows}
    print(json.dumps({k: v for k, v in summary.items() if k != "answers"}))
    atomic_write_text(paths.cache_subdir("bench") / "answer_length.json", json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
