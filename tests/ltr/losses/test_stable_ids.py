"""The NeuralLoss surrogate's cache key never changes: a pre-trained surrogate is found under it. The
literals below were computed by the code before the digest moved to ``core.digest``; they are
reference values of stored cache keys and must never change."""
from __future__ import annotations

from ltr.losses.neuralloss import SurrogateConfig


def test_the_surrogate_cache_key_is_the_one_stored_surrogates_carry():
    # surrogates of version 2 (pre-trained on lists padded to the longest) carry these keys: the digest of the
    # same fields still gives them, so a key changes only with the surrogate's version
    from dataclasses import asdict

    from core.digest import content_digest

    assert content_digest({**asdict(SurrogateConfig()), "version": 2}, 16) == "9ef9e5855c693b9b"
    assert content_digest({**asdict(SurrogateConfig(k=10, lr=0.001, adversarial=0.25)), "version": 2},
                          16) == "09fbea1af8dda1b8"
    # version 3 (issue 41: pre-trained on lists chunked by length) is another surrogate, under its own keys
    assert SurrogateConfig().key() == "b3cb4666b79001ab"
