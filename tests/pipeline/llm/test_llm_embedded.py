"""The embedded SmolLM2-135M-Instruct model, on llama.cpp and on transformers, generating for two real DL19 queries on the CPU."""
from __future__ import annotations

import pytest

from pipeline.generation.answers import zero_shot_messages
from pipeline.llm import GenerationOptions, ResponseCache, make_client

# two DL19 test queries (topics.dl19-passage.txt); read from ../shared when it is there
DL19 = {"1037798": "who is robert gray", "1063750": "why did the us volunterilay enter ww1"}


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["embedded:smollm2", "embedded:smollm2-transformers"])
def test_embedded_model_answers_two_real_queries(tmp_path, shared_dir_or_none, embedded_model, spec):
    # the model from the session's cache (the answers come from a response cache of this test's own): a
    # private cache de-quantised SmolLM2's GGUF for transformers again, 35 s on a quiet machine
    queries = dict(DL19)
    if shared_dir_or_none is not None:
        from pipeline.data.trec_io import read_topics
        topics = read_topics(shared_dir_or_none / "data" / "trec_dl" / "topics.dl19-passage.txt")
        queries = {qid: topics[qid] for qid in DL19}
    client = make_client(spec, cache=ResponseCache(tmp_path / "c.sqlite"))
    options = GenerationOptions(max_tokens=40)
    replies = client.chat_many([zero_shot_messages(q) for q in queries.values()], options)
    texts = [r.text for r in replies]
    assert all(len(t.split()) >= 5 for t in texts), texts  # real sentences, not empty or a token
    assert texts[0] != texts[1]
    assert all(r.provenance.small and r.provenance.backend == "embedded" for r in replies)
    again = client.chat(zero_shot_messages(list(queries.values())[0]), options)
    assert again.cached and again.text == texts[0]  # greedy decoding, served from the cache


@pytest.mark.slow
def test_embedded_answer_does_not_depend_on_its_batch(embedded_model):
    """Issue 18: the cache keys on the request alone, so an answer must be the same whichever prompts
    shared its batch. Prompts of different lengths are never padded into one batch; equal lengths
    batch together. Each answer is compared with the same prompt answered alone."""
    from pipeline.llm.backends.transformers_engine import TransformersBackend

    backend = TransformersBackend()
    options = GenerationOptions(max_tokens=24)
    prompts = [zero_shot_messages(q) for q in ("who is robert gray", "why did the us volunterilay enter ww1",
                                              "what is a lobster roll", "what is a lobster bowl",
                                              "define visceral")]
    _, tokenizer = backend.prepare()
    lengths = [len(tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=True)) for p in prompts]
    assert lengths[2] == lengths[3] and len(set(lengths)) < len(lengths)  # one group batches, others alone
    together = backend.complete_batch(prompts, options)
    alone = [backend.complete(p, options) for p in prompts]
    assert [c.text for c in together] == [c.text for c in alone]
    assert all(c.finish_reason in ("stop", "length") for c in together)
    reordered = backend.complete_batch(prompts[::-1], options)
    assert [c.text for c in reordered][::-1] == [c.text for c in alone]
