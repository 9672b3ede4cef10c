"""The NeuralLoss surrogate's cache key never changes: a pre-trained surrogate is found under it. The
literals below were computed by the code before the digest moved to ``core.digest``; they are
reference values of stored cache keys and must never change."""
from __future__ import annotations

from ltr.losses.neuralloss import SurrogateConfig


def test_the_surrogate_cache_key_is_the_one_stored_surrogates_carry():
    assert SurrogateConfig().key() == "9ef9e5855c693b9b"
    assert SurrogateConfig(k=10, lr=0.001, adversarial=0.25).key() == "09fbea1af8dda1b8"
