"""Pairwise-preference benchmark (plain script: prints numbers).

    python bench/bench_preference.py [--dataset dl19] [--queries 4] [--model embedded] [--data DIR]

With a fresh temporary response cache (the de-quantised model stays in the project cache), runs the difficulty-aware preference experiment twice on the first N
judgeable queries of the dataset, with hand-assigned reasons (each query gets the study's first H2R
category, so no assignment call is timed) and one model as generator and judge:

- run 1 (cold response cache): seconds per judged pair for the judge calls alone (two calls per
  pair, both orders), and for the whole pair (two generations + two judge calls); the backend's
  own call seconds are summed, so process start and model load are not in these figures;
- run 2 (the same configuration again): the share of LLM requests answered from the cache (1.0 means
  a rerun makes no model call) and its wall time.

Wall times on a shared machine move with the load; the cache-hit share does not.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from pipeline.llm.base import ChatClient  # noqa: E402  (after the project root is on the path)


class Recording(ChatClient):
    """A ChatClient proxy that keeps every reply (to count cache hits and sum call seconds)."""

    def __init__(self, client):
        self.client, self.provenance, self.backend, self.replies = client, client.provenance, client.backend, []

    def effective_options(self, options=None):
        return self.client.effective_options(options)

    def chat(self, messages, options=None):
        reply = self.client.chat(messages, options)
        self.replies.append(reply)
        return reply

    def chat_many(self, requests, options=None, progress=None, on_progress=None):
        replies = self.client.chat_many(requests, options, progress=progress, on_progress=on_progress)
        self.replies += replies
        return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="dl19")
    parser.add_argument("--queries", type=int, default=4)
    parser.add_argument("--model", default="embedded", help="make_client spec for generator and judge")
    parser.add_argument("--data", default=None)
    args = parser.parse_args()
    responses = Path(tempfile.mkdtemp(prefix="bench-preference-")) / "responses.sqlite"

    from core import paths
    from pipeline.prompting import difficulty, preference
    from pipeline.data.datasets import load_dataset
    from pipeline.llm import ResponseCache, make_client
    from pipeline.llm.base import GenerationOptions
    from pipeline.typology.categories import Assignment, load_typology

    shared = paths.shared_data_dir()
    data = load_dataset(args.dataset, args.data or (shared / "trec_dl" if shared else None))
    typology, templates = load_typology(), difficulty.load_templates()
    first_h2r = typology.for_task("h2r")[0]
    assignments = [Assignment(qid, "h2r", [(first_h2r, "")], source="bench") for qid in data.judged_qids]
    config = preference.PreferenceConfig(max_queries=args.queries, max_passages=2, passage_chars=400,
                                         generation=GenerationOptions(max_tokens=96))
    runs = []
    for attempt in (1, 2):
        generator = Recording(make_client(args.model, cache=ResponseCache(responses)))
        judge = Recording(make_client(args.model, cache=ResponseCache(responses)))
        t0 = time.perf_counter()
        result = preference.run_preference(data, assignments, typology, templates, judge,
                                           preference.AnswerSide(generator), preference.AnswerSide(generator), config)
        runs.append((time.perf_counter() - t0, generator, judge, result))
    wall1, gen1, judge1, result = runs[0]
    pairs = sum(1 for p in result["pairs"] if p["verdicts"])
    judge_seconds = sum(getattr(r, "seconds", 0.0) for r in judge1.replies)
    gen_seconds = sum(getattr(r, "seconds", 0.0) for r in gen1.replies)
    print(f"model: {judge1.provenance.label}; {args.dataset}, {pairs} judged pairs "
          f"(max_passages 2, passage_chars 400, generation max_tokens 96)")
    print(f"run 1 (cold cache): wall {wall1:.1f} s; judge {judge_seconds / max(pairs, 1):.2f} s per judged pair "
          f"(2 calls); whole pair incl. generations {(judge_seconds + gen_seconds) / max(pairs, 1):.2f} s")
    wall2, gen2, judge2, again = runs[1]
    replies = [r for r in gen2.replies + judge2.replies if not isinstance(r, Exception)]
    hits = sum(bool(getattr(r, "cached", False)) for r in replies)
    print(f"run 2 (rerun): wall {wall2:.2f} s; cache-hit share {hits}/{len(replies)} = {hits / max(len(replies), 1):.3f}; "
          f"same summary: {again['summary'] == result['summary']}")


if __name__ == "__main__":
    main()
