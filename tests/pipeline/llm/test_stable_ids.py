"""The response cache's key never changes: a cached answer is found under it, so a rerun makes no call.
The literals below were computed by the code before the digest moved to ``core.digest`` (sha256 of
sorted-key JSON with non-ASCII text kept as UTF-8, the full 64 hex digits); they are reference values
of stored cache keys and must never change."""
from __future__ import annotations

from pipeline.llm.base import GenerationOptions, Provenance
from pipeline.llm.cache import request_key

PROVENANCE = Provenance("ollama", "qwen3:8b", endpoint="http://gpu-host:11434", digest="500a1f067a9f")


def test_a_request_key_is_the_one_cached_answers_carry():
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": "what is the capital of France?"}]
    assert request_key(PROVENANCE, messages, GenerationOptions()) == "94cf543291b0d4cba87842738d3536f01b8bd40fddf620e6d40dd6a5267d88c7"


def test_a_request_key_over_non_ascii_text_and_every_option():
    # ensure_ascii=False: "é", "«»" and "雨" enter the digest as UTF-8 bytes, not as \\u escapes
    messages = [{"role": "user", "content": "Qu'est-ce que la «pluie» ? 雨 – café"}]
    options = GenerationOptions(temperature=0.7, seed=3, max_tokens=64, think=True, num_ctx=4096,
                                json_schema='{"type": "object"}', top_logprobs=5)
    assert request_key(PROVENANCE, messages, options) == "626151d7eb4f25d83f0791a793c8a8aeb3a6cca295ea24e944041a587abee768"
