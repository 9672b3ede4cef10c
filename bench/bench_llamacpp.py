"""llama.cpp against transformers, and the 1.5B default's speed goals (plain script: prints numbers,
writes ``cache/bench/llamacpp.json``).

    python bench/bench_llamacpp.py [--tokens 48] [--skip-transformers]

Each measurement runs in a fresh subprocess (so load time and peak RSS are that engine's alone):

- SmolLM2-135M-Instruct on transformers (``embedded:smollm2-transformers``: GGUF de-quantised, the
  safetensors cache built first, then loaded from it) and on llama.cpp (``embedded:smollm2``), side by
  side: load seconds, greedy decode tokens/s for one prompt, peak RSS;
- Qwen2.5-Coder-1.5B-Instruct (the default) on llama.cpp: cold load (file already assembled, fresh
  process), warm decode tokens/s with 1 thread and with every core, prefill tokens/s of a prompt of
  about 340 tokens (llama.cpp's own timing), 4 prompts decoded together (aggregate tokens/s), and
  the latency of a response-cache hit (mean of 200 ``CachedClient.chat``).

The machine's load average is printed with every figure, and tokens per CPU-second beside tokens
per second: on a shared machine wall-clock figures are lower bounds of what the engine does on a
quiet one; CPU-second figures are nearly load-independent. Transformers' load is cold (it
de-quantises the GGUF and writes its safetensors cache).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PROMPT = [{"role": "user", "content": "Explain in a paragraph why the sky is blue."}]

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
spec, tokens, threads, parallel = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
from pipeline.llm.base import GenerationOptions
from pipeline.llm.specs import make_backend
if spec.endswith("-transformers"):
    backend = make_backend(spec)
    if threads:
        backend.threads = threads
else:
    from pipeline.llm.backends.llamacpp import LlamaCppBackend
    backend = LlamaCppBackend(spec.split(":", 1)[1], threads=threads or None, parallel=max(parallel, 1))
prompt = [{"role": "user", "content": "Explain in a paragraph why the sky is blue."}]
load0 = os.getloadavg()[0]
t, c = time.perf_counter(), time.process_time(); backend.prepare()
load_s, load_cpu_s = time.perf_counter() - t, time.process_time() - c
opts = GenerationOptions(max_tokens=tokens)
backend.complete(prompt, GenerationOptions(max_tokens=4))  # warm-up
def n_generated():
    usage = getattr(backend, "last_usage", None)
    return usage.get("completion_tokens") if usage else getattr(backend, "last_n_tokens", tokens)
t, c = time.perf_counter(), time.process_time(); backend.complete(prompt, opts)
one_s, one_cpu = time.perf_counter() - t, time.process_time() - c
one_tokens = n_generated()
out = {"spec": spec, "engine": getattr(backend, "engine", "transformers"), "threads": backend.threads,
       "load_s": load_s, "load_cpu_s": load_cpu_s, "decode_tokens": one_tokens, "decode_s": one_s,
       "tokens_per_s": one_tokens / one_s, "tokens_per_cpu_s": one_tokens / one_cpu}
if hasattr(backend, "last_timings"):
    # prefill of a judge-sized prompt (about 340 tokens, nothing cached), as llama.cpp times it
    passage = "the sky is blue because air scatters short wavelengths of sunlight more than long ones."
    long_prompt = [{"role": "user", "content": " ".join(f"Passage {i}: {passage}" for i in range(20))}]
    backend.complete(long_prompt, GenerationOptions(max_tokens=1, seed=1))
    t = backend.last_timings
    out.update(prefill_tokens=t.get("prompt_n"), prefill_tokens_per_s=t.get("prompt_per_second"))
if parallel > 1:
    prompts = [[{"role": "user", "content": f"Explain in a paragraph why the sky is blue ({i})."}] for i in range(parallel)]
    t, c = time.perf_counter(), time.process_time(); backend.complete_batch(prompts, opts)
    many_s, many_cpu = time.perf_counter() - t, time.process_time() - c
    out.update(batch=parallel, batch_s=many_s, batch_tokens_per_s=parallel * tokens / many_s,
               batch_tokens_per_cpu_s=parallel * tokens / many_cpu)
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["load_average"] = [load0, os.getloadavg()[0]]
print("RESULT " + json.dumps(out))
"""

CACHE_HIT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pipeline.llm import CachedClient, GenerationOptions, ResponseCache, ScriptedBackend
client = CachedClient(ScriptedBackend(lambda m: "an answer"), ResponseCache(sys.argv[2] + "/hits.sqlite"))
msgs = [{"role": "user", "content": "q"}]
client.chat(msgs, GenerationOptions())
t = time.perf_counter()
for _ in range(200):
    assert client.chat(msgs, GenerationOptions()).cached
print("RESULT " + json.dumps({"cache_hit_ms": (time.perf_counter() - t) / 200 * 1000}))
"""


def child(code: str, *args) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    return {"error": (proc.stderr or proc.stdout)[-800:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--skip-transformers", action="store_true")
    args = parser.parse_args()
    from core import paths
    from core.atomic import atomic_write_text

    cores = len(os.sched_getaffinity(0))
    results = {"cores": cores, "tokens": args.tokens, "runs": []}

    def record(label, res):
        res["label"] = label
        results["runs"].append(res)
        print(label, json.dumps(res), flush=True)
        atomic_write_text(paths.cache_subdir("bench") / "llamacpp.json", json.dumps(results, indent=1))

    if not args.skip_transformers:
        record("smollm2 transformers (1 thread)", child(CHILD, "embedded:smollm2-transformers", args.tokens, 1, 1))
    record("smollm2 llama.cpp (1 thread)", child(CHILD, "embedded:smollm2", args.tokens, 1, 1))
    record("qwen1.5b llama.cpp cold load + 1 thread", child(CHILD, "embedded:qwen2.5-coder-1.5b", args.tokens, 1, 1))
    record(f"qwen1.5b llama.cpp {cores} threads, 4 slots",
           child(CHILD, "embedded:qwen2.5-coder-1.5b", args.tokens, cores, 4))
    with tempfile.TemporaryDirectory() as tmp:
        record("response-cache hit", child(CACHE_HIT, tmp))


if __name__ == "__main__":
    main()
