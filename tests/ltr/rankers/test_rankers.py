"""The four rankers: shapes, padding isolation, permutation equivariance, learning, the factory."""
from __future__ import annotations

import pytest
import torch

from ltr.rankers import RANKER_NAMES, make_ranker

VARIANTS = [(name, {}) for name in RANKER_NAMES] + [("attention_mil", {"gated": True})]
IDS = [n + ("-gated" if p else "") for n, p in VARIANTS]
F = 10
# small widths keep the learning test fast; defaults are exercised by the other tests
SMALL = {"mlp": dict(hidden=(32,)), "attsets": dict(hidden=(32,), head_hidden=(16,)),
         "attention_mil": dict(hidden=(32,), attention_dim=16, head_hidden=(16,)),
         "context_aware": dict(d_model=32, n_heads=2, n_layers=1, d_ff=64)}


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 9, F, generator=g)
    mask = torch.ones(4, 9, dtype=torch.bool)
    mask[0, 5:] = False
    mask[1, 1:] = False  # a single real document
    mask[2, 8:] = False
    x[~mask] = 0
    return x, mask


def test_names():
    assert RANKER_NAMES == ("mlp", "attsets", "attention_mil", "context_aware")


@pytest.mark.parametrize("name, params", VARIANTS, ids=IDS)
def test_padding_never_influences_real_scores(name, params):
    torch.manual_seed(0)
    model = make_ranker(name, F, **params).eval()
    x, mask = batch()
    scores = model(x, mask)
    assert scores.shape == mask.shape and torch.isfinite(scores).all()
    noisy = x.clone()
    noisy[~mask] = 100 * torch.randn_like(noisy[~mask])
    torch.testing.assert_close(model(noisy, mask)[mask], scores[mask], rtol=0, atol=1e-5)
    assert (scores[~mask] == 0).all()
    # the single-document row scores the same alone, in a batch of its own with no padding at all
    alone = model(x[1:2, :1], mask[1:2, :1])
    torch.testing.assert_close(alone[0, 0], scores[1, 0], rtol=0, atol=1e-5)


@pytest.mark.parametrize("name, params", VARIANTS, ids=IDS)
def test_scores_follow_a_permutation_of_the_list(name, params):
    torch.manual_seed(0)
    model = make_ranker(name, F, **params).eval()
    x, mask = batch(1)
    perm = torch.randperm(9)
    torch.testing.assert_close(model(x[:, perm], mask[:, perm]), model(x, mask)[:, perm], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, params", VARIANTS, ids=IDS)
def test_learns_a_simple_ordering(name, params):
    """A few Adam steps on a pointwise loss reduce the error: gradients reach every layer."""
    torch.manual_seed(0)
    model = make_ranker(name, F, dropout=0.0, **SMALL[name], **params)
    x, mask = batch(2)
    target = x[..., 0] - x[..., 1]
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def loss():
        return ((model(x, mask) - target)[mask] ** 2).mean()

    start = loss().item()
    for _ in range(40):
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    assert loss().item() < 0.5 * start


def test_factory_errors():
    with pytest.raises(ValueError, match="unknown ranker 'tree'"):
        make_ranker("tree", F)
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['width'\].*accepted"):
        make_ranker("mlp", F, width=3)
    model = make_ranker("context_aware", F, d_model=16, n_heads=2, n_layers=1, d_ff=32)
    assert model(*batch()).shape == (4, 9)
