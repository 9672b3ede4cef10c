"""LearnDCG-meta: its defining property (theta's gradient is the look-ahead hypergradient of the
validation NDCG, checked against a finite difference), its equivalences and its plumbing."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from ltr.losses import make_loss


class LinearRanker(nn.Module):
    def __init__(self, n_features: int):
        super().__init__()
        self.linear = nn.Linear(n_features, 1)

    def forward(self, features, mask):
        return self.linear(features).squeeze(-1).masked_fill(~mask, 0.0)


class Batch:
    def __init__(self, features, labels):
        self.features, self.labels, self.mask = features, labels, labels != -1


def tiny_problem(seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    def batch(b, n):
        labels = torch.randint(0, 3, (b, n), generator=gen).to(dtype)
        labels[:, 0] = 2.0  # every list has a relevant document
        labels[0, n - 2:] = -1  # padding
        features = torch.randn(b, n, 5, generator=gen, dtype=dtype) + labels.clamp(min=0)[..., None] * \
            torch.randn(5, generator=gen, dtype=dtype)
        return Batch(features, labels)
    torch.manual_seed(seed)
    model = LinearRanker(5).to(dtype)
    return model, batch(3, 12), batch(2, 14)


def lookahead_target(loss, model, train, vali, theta_g, theta_d, lr):
    """V(w - lr * grad_w L_train(w; theta)) computed directly (no hypergradient code involved)."""
    params = dict(model.named_parameters())
    value = loss._value(model(train.features, train.mask), train.labels, theta_g, theta_d)
    grads = torch.autograd.grad(value, list(params.values()))
    ahead = {n: p - lr * g for (n, p), g in zip(params.items(), grads)}
    scores = torch.func.functional_call(model, ahead, (vali.features, vali.mask))
    return loss.target(scores, vali.labels)


@pytest.mark.parametrize("b_g,p_d", [(2.0, 1.0), (3.0, 0.5), (1.5, 2.5)])
def test_theta_gradient_is_the_finite_difference_of_the_lookahead_validation_ndcg(b_g, p_d):
    model, train, vali = tiny_problem()
    loss = make_loss("learndcg_meta", b_g=b_g, p_d=p_d).double()
    loss.attach_validation([vali])
    lr = 0.5
    scores = model(train.features, train.mask)
    loss.hypergradient_backward(model, scores, train.labels, step=0, lr=lr)
    got = {"theta_g": loss.theta_g.grad.item(), "theta_d": loss.theta_d.grad.item()}
    h = 1e-5
    tg, td = loss.theta_g.detach(), loss.theta_d.detach()
    fd = {
        "theta_g": (lookahead_target(loss, model, train, vali, tg + h, td, lr)
                    - lookahead_target(loss, model, train, vali, tg - h, td, lr)) / (2 * h),
        "theta_d": (lookahead_target(loss, model, train, vali, tg, td + h, lr)
                    - lookahead_target(loss, model, train, vali, tg, td - h, lr)) / (2 * h),
    }
    for name in got:  # theta.grad is the descent direction of -V per unit look-ahead step: -dV/dθ / lr
        assert got[name] == pytest.approx(-fd[name].item() / lr, rel=1e-5, abs=1e-12), name
    assert any(abs(v) > 1e-6 for v in got.values())  # the check is not 0 == 0


def test_ranker_gradient_is_the_plain_training_gradient():
    model, train, vali = tiny_problem(seed=1)
    loss = make_loss("learndcg_meta").double()
    loss.attach_validation([vali])
    loss.hypergradient_backward(model, model(train.features, train.mask), train.labels, step=3, lr=0.1)
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    loss(model(train.features, train.mask), train.labels).backward()
    for a, b in zip(got, model.parameters()):
        torch.testing.assert_close(a, b.grad)


def test_plain_backward_never_moves_theta_and_init_is_approxndcg():
    """forward() holds theta constant; at b_g = 2, p = 1 the value is ApproxNDCG's (learned ideal = standard
    one when p = 1 and b_g = 2)."""
    gen = torch.Generator().manual_seed(2)
    scores = torch.randn(4, 9, generator=gen, requires_grad=True)
    labels = torch.randint(0, 3, (4, 9), generator=gen).float()
    loss = make_loss("learndcg_meta")
    assert loss.theta_d.item() == pytest.approx(math.log(math.e - 1))  # the study's initial theta
    value = loss(scores, labels)
    value.backward()
    assert loss.theta_g.grad is None and loss.theta_d.grad is None
    torch.testing.assert_close(value, make_loss("approxndcg")(scores, labels), rtol=1e-6, atol=0)


def test_shape_parameters_change_the_surrogate_not_its_scale():
    """The study's b_d rescales every list's value by the same factor ln(b_d) (the ratio of two lists'
    losses never changes); the discount power p changes the ratio, i.e. which list is preferred by
    how much. And the value stays a normalised DCG in [-1, 0]."""
    labels = torch.tensor([[2.0, 1.0, 1.0, 1.0, 0.0, 0.0], [2.0, 1.0, 1.0, 1.0, 0.0, 0.0]])
    scores = torch.tensor([[6.0, 0.0, -1.0, -2.0, 1.0, 2.0], [-3.0, 6.0, 5.0, 4.0, -1.0, -2.0]])
    def ratio(name, **params):
        per_query = [make_loss(name, **params)(scores[i:i + 1], labels[i:i + 1]).item() for i in range(2)]
        return per_query[0] / per_query[1]
    study = [ratio("learndcg", b_d=b) for b in (1.5, 2.0, 6.0)]
    assert study == pytest.approx([study[0]] * 3, rel=1e-5)
    meta = [ratio("learndcg_meta", p_d=p) for p in (0.3, 1.0, 3.0)]
    assert meta[0] < meta[1] < meta[2]  # steeper discount: the top-first list gains on the other
    for p in (0.1, 1.0, 5.0):
        for b in (1.1, 2.0, 8.0):
            v = make_loss("learndcg_meta", b_g=b, p_d=p)(torch.randn(3, 7), torch.randint(0, 3, (3, 7)).float())
            assert -1.0 - 1e-6 <= v.item() <= 0.0


def test_needs_validation_and_validates_parameters():
    model, train, _ = tiny_problem()
    loss = make_loss("learndcg_meta").double()
    with pytest.raises(RuntimeError, match="attach_validation"):
        loss.hypergradient_backward(model, model(train.features, train.mask), train.labels, step=0, lr=0.1)
    with pytest.raises(ValueError, match="p_d"):
        make_loss("learndcg_meta", p_d=0.0)
    assert set(loss.tracked_parameters()) == {"theta_g", "theta_d", "b_g", "p_d"}
    assert set(loss.theta_gradients()) == {"theta_g", "theta_d"}
