"""LLM-side benchmark (plain script: prints numbers).

    python bench/bench_llm.py [--pairs 256] [--tokens 64] [--batch 8]

Measures, in a fresh temporary cache:
- BERTScore pairs/s with the offline encoder (packaged all-MiniLM-L6-v2, layer 5), uncached pairs
  (answer-length candidates against passage-length references), after one warm-up batch;
- the embedded SmolLM2-135M-Instruct: cold load (GGUF de-quantisation + writing the safetensors
  cache), warm load (from that cache, fresh process state for the model), and greedy generation
  tokens/s for one prompt and for a batch of ``--batch`` prompts;
- the time of a response-cache hit through ``CachedClient.chat`` (SQLite lookup), mean of 200.

Wall seconds and CPU seconds are both printed: on a shared machine CPU seconds are the
load-independent figure.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_retrieval import Clock  # noqa: E402  (wall and CPU seconds; bench/ is the script's folder)


QUERIES = ["who is robert gray", "what is a lobster roll", "how long is life cycle of flea",
           "what is physical description of spruce", "causes of left ventricular hypertrophy",
           "what are the three percenters?", "cost of interior concrete flooring", "definition of a sigmet"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    os.environ["IRDASH_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-llm-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from pipeline.generation import bertscore
    from pipeline.generation.answers import zero_shot_messages
    from pipeline.llm import CachedClient, GenerationOptions, ResponseCache, ScriptedBackend
    from pipeline.llm.backends import transformers_engine

    # ---- BERTScore
    enc = bertscore.resolve_encoder("minilm")
    answer = ("Robert Gray was an American sea captain who in 1792 became the first to navigate the Columbia River, "
              "which he named after his ship.")
    passage = ("Captain Robert Gray (1755-1806) was an American merchant sea-captain who is known for his "
               "achievements in connection with two trading voyages to the northern Pacific coast of North America, "
               "between 1790 and 1793, which pioneered the American maritime fur trade in that region.")
    cache = bertscore.PairCache(Path(os.environ["IRDASH_CACHE_DIR"]) / "bs.sqlite")
    bertscore.pair_f1(enc, [answer + " warm-up"] * 32, [passage] * 32, cache=cache)  # load + warm up
    answers = [f"{answer} ({i})" for i in range(args.pairs)]  # distinct: nothing comes from the cache
    with Clock() as c:
        bertscore.pair_f1(enc, answers, [passage] * args.pairs, cache=cache)
    print(f"BERTScore ({enc.key}, layer {enc.num_layers}): {args.pairs} pairs in {c.wall:.2f} s wall, "
          f"{c.cpu:.2f} s CPU -> {args.pairs / c.wall:.1f} pairs/s wall")

    # ---- embedded model: cold (de-quantise + write cache) and warm (read the cache) loads
    with Clock() as c:
        folder = transformers_engine.dequantised_folder()
    print(f"embedded cold load (GGUF de-quantisation + safetensors cache): {c.wall:.1f} s wall, {c.cpu:.1f} s CPU")
    transformers_engine._LOADED.clear()
    with Clock() as c:
        backend = transformers_engine.TransformersBackend()
        backend.prepare()
    print(f"embedded warm load (from {folder.name}): {c.wall:.2f} s wall, {c.cpu:.2f} s CPU")
    options = GenerationOptions(max_tokens=args.tokens)
    backend.complete(zero_shot_messages("warm up"), GenerationOptions(max_tokens=4))
    with Clock() as c:
        backend.complete(zero_shot_messages(QUERIES[0]), options)
    n = backend.last_n_tokens
    print(f"embedded generation, 1 prompt: {n} tokens in {c.wall:.2f} s wall -> {n / c.wall:.2f} tokens/s "
          f"({c.cpu:.2f} s CPU, {backend.threads} torch thread(s))")
    prompts = [zero_shot_messages(q) for q in (QUERIES * 4)[:args.batch]]
    with Clock() as c:
        backend.complete_batch(prompts, options)
    n = backend.last_n_tokens
    print(f"embedded generation, batch of {args.batch}: {n} tokens in {c.wall:.2f} s wall -> {n / c.wall:.2f} "
          f"tokens/s ({c.cpu:.2f} s CPU)")

    # ---- response-cache hit
    client = CachedClient(ScriptedBackend(lambda m: "an answer"), ResponseCache(Path(os.environ["IRDASH_CACHE_DIR"]) / "r.sqlite"))
    message = [{"role": "user", "content": "hello"}]
    client.chat(message)
    with Clock() as c:
        for _ in range(200):
            assert client.chat(message).cached
    print(f"response-cache hit (CachedClient.chat): {c.wall / 200 * 1000:.2f} ms wall per hit (mean of 200)")


if __name__ == "__main__":
    main()
