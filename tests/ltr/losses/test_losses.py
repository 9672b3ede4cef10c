"""The eleven losses: allRank parity, LearnDCG's equivalences, NeuralLoss, and robustness of all."""
from __future__ import annotations

import math

import pytest
import torch

from ltr.losses import LOSS_NAMES, make_loss
from tests.ltr.support import one_torch_thread

# fixture key -> (loss name, params); rmse's number of levels is the case's number of grades
GOLDEN = {
    "approxNDCG_alpha1": ("approxndcg", {"alpha": 1.0}),
    "approxNDCG_alpha10": ("approxndcg", {"alpha": 10.0}),
    "listNet": ("listnet", {}),
    "rankNet": ("ranknet", {}),
    "lambdaRank_scheme_sigma1": ("lambdarank", {"sigma": 1.0}),
    "ndcgLoss2_scheme": ("lambdaloss", {"scheme": "ndcgloss2", "sigma": 1.0}),
    "ndcgLoss2PP_scheme_mu10": ("lambdaloss", {"scheme": "ndcgloss2pp", "mu": 10.0, "sigma": 1.0}),
    "neuralNDCG_tau1": ("neuralndcg", {"temperature": 1.0}),
    "neuralNDCG_tau1_k10": ("neuralndcg", {"temperature": 1.0, "k": 10}),
    "rmse_3levels_on_sigmoid": ("rmse", {}),
}
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def value_and_grad(loss, scores, labels):
    scores = scores.detach().clone().requires_grad_(True)
    value = loss(scores, labels)
    (grad,) = torch.autograd.grad(value, scores)
    return value.detach(), grad


# NeuralLoss with a short pre-training: these tests check padding, finiteness and preferences, not its
# accuracy (tests/ltr/losses/test_neuralloss.py pre-trains to convergence and checks that).
QUICK = {"neuralloss": {"max_steps": 500, "eval_every": 250}}


@pytest.fixture(scope="module")
def losses():
    """One instance of every loss (NeuralLoss pre-trains once, briefly, on one thread)."""
    with one_torch_thread():
        return {name: make_loss(name, **QUICK.get(name, {})) for name in LOSS_NAMES}


def test_golden_covers_every_fixture_entry(golden):
    assert set(golden["cases"][0]["losses"]) == set(GOLDEN)


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_allrank_parity(golden, key):
    name, params = GOLDEN[key]
    for case in golden["cases"]:
        scores, labels = torch.tensor(case["y_pred"]), torch.tensor(case["y_true"])
        if name == "rmse":
            params = {"n_levels": int(labels.max()) + 1}
        value, grad = value_and_grad(make_loss(name, **params), scores, labels)
        expected_grad = torch.tensor(case["grads"][key])
        where = f"{key}, case {case['case']}"
        assert value.item() == pytest.approx(case["losses"][key], rel=1e-4), where
        torch.testing.assert_close(grad, expected_grad, rtol=1e-4, atol=1e-4 * expected_grad.abs().max().item(), msg=where)


def test_factory():
    assert LOSS_NAMES == ("ranknet", "listnet", "listmle", "rmse", "lambdarank", "lambdaloss", "approxndcg",
                          "neuralndcg", "neuralloss", "learndcg", "learndcg_fixed", "learndcg_meta")
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        make_loss("hinge")
    with pytest.raises(TypeError, match="ranknet"):
        make_loss("ranknet", temperature=2.0)
    assert isinstance(make_loss("ApproxNDCG"), torch.nn.Module)


def awkward_batch(device="cpu"):
    """Padding, an all-zero query, ties, a one-document list, a list with every label equal."""
    gen = torch.Generator().manual_seed(7)
    scores = torch.randn(6, 9, generator=gen)
    labels = torch.randint(0, 5, (6, 9), generator=gen).float()
    labels[0, 6:] = -1  # padded tail
    labels[1] = 0.0  # no relevant document
    labels[1, 7:] = -1
    scores[2, :4] = 0.5  # tied scores...
    labels[2, :4] = torch.tensor([2.0, 0.0, 1.0, 2.0])  # ...with different labels
    labels[3, 1:] = -1  # a list of length 1
    labels[3, 0] = 3.0
    labels[4] = 2.0  # every label equal
    return scores.to(device), labels.to(device)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_every_loss_is_finite_and_ignores_padding(losses, device):
    scores, labels = awkward_batch(device)
    padded = labels == -1
    for name, loss in losses.items():
        loss = loss.to(device)
        torch.manual_seed(0)
        value, grad = value_and_grad(loss, scores, labels)
        assert value.dim() == 0 and torch.isfinite(value), name
        assert torch.isfinite(grad).all(), name
        assert (grad[padded] == 0).all(), f"{name}: padded documents get gradient"
        assert grad[~padded].abs().sum() > 0, f"{name}: no gradient reaches the scores"
        for filler in (1e4, -1e4, float("inf"), float("nan")):
            changed = torch.where(padded, torch.full_like(scores, filler), scores)
            torch.manual_seed(0)
            value2, grad2 = value_and_grad(loss, changed, labels)
            torch.testing.assert_close(value2, value, rtol=1e-6, atol=1e-7, msg=f"{name}, padding = {filler}")
            torch.testing.assert_close(grad2, grad, rtol=1e-5, atol=1e-7, msg=f"{name}, padding = {filler}")


@pytest.mark.slow
def test_extra_padding_columns_change_nothing(losses):
    scores, labels = awkward_batch()
    wider_scores = torch.cat([scores, torch.randn(6, 5)], dim=1)
    wider_labels = torch.cat([labels, -torch.ones(6, 5)], dim=1)
    for name, loss in losses.items():
        if name == "listmle":
            continue  # its tie order is a random permutation of the padded width, by design
        value, grad = value_and_grad(loss, scores, labels)
        value2, grad2 = value_and_grad(loss, wider_scores, wider_labels)
        torch.testing.assert_close(value2, value, rtol=1e-5, atol=1e-6, msg=name)
        torch.testing.assert_close(grad2[:, :9], grad, rtol=1e-5, atol=1e-6, msg=name)


@pytest.mark.slow
def test_every_loss_prefers_the_ideal_ranking(losses):
    gen = torch.Generator().manual_seed(3)
    labels = torch.randint(0, 5, (8, 20), generator=gen).float()
    labels[:, 15:] = -1
    labels[:, 0] = 4.0  # every query has a relevant document
    jitter = 0.01 * torch.randn(8, 20, generator=gen)  # no ties in the scores
    good, bad = labels + jitter, -labels + jitter
    for name, loss in losses.items():
        torch.manual_seed(0)
        assert loss(good, labels) < loss(bad, labels), name


def test_no_relevant_document_anywhere_gives_zero_gradient():
    scores, labels = torch.randn(3, 6), torch.zeros(3, 6)
    labels[2, 4:] = -1
    for name in ("approxndcg", "neuralndcg", "learndcg", "lambdarank", "lambdaloss", "ranknet"):
        value, grad = value_and_grad(make_loss(name), scores, labels)
        assert torch.isfinite(value) and (grad == 0).all(), name


# --- LearnDCG -------------------------------------------------------------------------------------


@pytest.mark.parametrize("normalisation", ["standard", "learned"])
def test_learndcg_at_init_is_approxndcg(normalisation):
    scores, labels = awkward_batch()
    learn = make_loss("learndcg", normalisation=normalisation)
    assert learn.b_g.item() == 2.0 and learn.b_d.item() == 2.0 and learn.alpha.item() == 1.0
    assert learn.theta_g.item() == pytest.approx(math.log(math.e - 1))
    value, grad = value_and_grad(learn, scores, labels)
    ref_value, ref_grad = value_and_grad(make_loss("approxndcg", alpha=1.0), scores, labels)
    if normalisation == "standard":  # the very same computation
        assert torch.equal(value, ref_value) and torch.equal(grad, ref_grad)
    else:  # ln(b_d) cancelled analytically: equal up to rounding
        torch.testing.assert_close(value, ref_value, rtol=1e-6, atol=0)
        torch.testing.assert_close(grad, ref_grad, rtol=1e-5, atol=1e-7)


def test_learndcg_theta_d_gradient_depends_on_normalisation():
    scores, labels = awkward_batch()
    grads = {}
    for normalisation in ("standard", "learned"):
        learn = make_loss("learndcg", normalisation=normalisation)
        learn(scores.requires_grad_(True), labels).backward()
        grads[normalisation] = learn.theta_gradients()
        assert set(grads[normalisation]) == {"theta_g", "theta_d", "theta_alpha"}
        assert all(math.isfinite(g) and g != 0 for k, g in grads[normalisation].items() if k != "theta_d")
    assert grads["learned"]["theta_d"] == 0.0
    assert math.isfinite(grads["standard"]["theta_d"]) and grads["standard"]["theta_d"] != 0.0
    # with the learned ideal DCG the value does not depend on b_d at all
    learn = make_loss("learndcg", normalisation="learned")
    before = learn(scores, labels).item()
    with torch.no_grad():
        learn.theta_d.add_(3.0)
    assert learn(scores, labels).item() == before


def test_learndcg_learns_its_parameters():
    learn = make_loss("learndcg", b_g=3.0, b_d=1.5, alpha=2.0)
    tracked = learn.tracked_parameters()
    assert tracked["b_g"] == pytest.approx(3.0) and tracked["b_d"] == pytest.approx(1.5)
    assert tracked["alpha"] == pytest.approx(2.0)
    assert {p.requires_grad for p in learn.parameters()} == {True} and len(list(learn.parameters())) == 3
    scores, labels = awkward_batch()
    optimiser = torch.optim.SGD(learn.parameters(), lr=1.0)
    learn(scores, labels).backward()
    optimiser.step()
    assert learn.tracked_parameters()["theta_g"] != tracked["theta_g"]


def test_learndcg_fixed_is_frozen_at_configurable_values():
    fixed = make_loss("learndcg_fixed", b_g=3.0, b_d=2.5, alpha=0.5)
    assert all(not p.requires_grad for p in fixed.parameters())
    assert fixed.tracked_parameters() == {} and fixed.theta_gradients() == {}
    assert fixed.b_g.item() == pytest.approx(3.0) and fixed.b_d.item() == pytest.approx(2.5)
    assert fixed.alpha.item() == pytest.approx(0.5)
    scores, labels = awkward_batch()
    value, grad = value_and_grad(fixed, scores, labels)
    assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    default = make_loss("learndcg_fixed")
    torch.testing.assert_close(default(scores, labels), make_loss("approxndcg")(scores, labels), rtol=0, atol=0)


# --- NeuralLoss -----------------------------------------------------------------------------------


def test_neuralloss_rejects_unknown_parameters():
    with pytest.raises(TypeError, match="known parameters"):
        make_loss("neuralloss", depth=3)


@pytest.mark.parametrize("b_d", [1.5, 2.0, 4.0])
def test_learndcg_standard_theta_d_gradient_is_the_closed_form_scale_factor(b_d):
    """DCG is ln(b_d) times a b_d-free sum, so dL/dθ_d = L·σ(θ_d)/(b_d ln b_d): negative for every
    negative loss (θ_d only climbs; see the module docstring)."""
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(4, 10, generator=gen, requires_grad=True)
    labels = torch.randint(0, 3, (4, 10), generator=gen).float()
    loss = make_loss("learndcg", b_d=b_d, normalisation="standard")
    value = loss(scores, labels)
    value.backward()
    theta = loss.theta_d.detach()
    expected = value.detach() * torch.sigmoid(theta) / (loss.b_d.detach() * torch.log(loss.b_d.detach()))
    assert loss.theta_d.grad.item() == pytest.approx(expected.item(), rel=1e-5)
    assert loss.theta_d.grad.item() < 0


def _random_batches(n_batches=300, seed=5):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        b, n = int(torch.randint(1, 4, (1,), generator=gen)), int(torch.randint(2, 9, (1,), generator=gen))
        labels = (torch.rand(b, n, generator=gen) < 0.25).float() * torch.randint(1, 3, (b, n), generator=gen)
        yield torch.randn(b, n, generator=gen), labels


def test_learndcg_standard_gradient_signs_on_random_batches():
    """Closed form under the standard ideal DCG: dL/dθ_d = L·σ(θ_d)/(b_d ln b_d) < 0 on every batch with a
    relevant document and exactly 0 on a batch without one (never positive); dL/dθ_g < 0 likewise
    (∂DCG/∂b_g > 0). So both only ever climb under gradient descent."""
    signs = {"theta_d": [], "theta_g": []}
    for scores, labels in _random_batches():
        loss = make_loss("learndcg")
        value = loss(scores.requires_grad_(True), labels)
        value.backward()
        relevant = bool((labels > 0).any())
        grads = loss.theta_gradients()
        b_d, theta_d = loss.b_d.detach(), loss.theta_d.detach()
        closed = (value.detach() * torch.sigmoid(theta_d) / (b_d * torch.log(b_d))).item()
        assert grads["theta_d"] == pytest.approx(closed, rel=1e-5, abs=0)
        for name in signs:
            if relevant:
                assert grads[name] < 0, name
            else:
                assert grads[name] == 0.0, name
            signs[name].append(grads[name])
    n_zero = sum(g == 0.0 for g in signs["theta_d"])
    assert 0 < n_zero < 300  # both cases occurred
    assert max(signs["theta_d"]) == 0.0 and max(signs["theta_g"]) == 0.0


def test_learndcg_learned_normalisation_gives_theta_d_exactly_zero_and_standard_is_unbounded():
    for scores, labels in _random_batches(50, seed=6):
        loss = make_loss("learndcg", normalisation="learned")
        loss(scores.requires_grad_(True), labels).backward()
        assert loss.theta_gradients()["theta_d"] == 0.0
    # standard: no lower bound (an NDCG would stay >= -1): large bases push the loss far below -1
    gen = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (4, 10), generator=gen).float()
    scores = labels + 0.1 * torch.randn(4, 10, generator=gen)
    assert make_loss("learndcg", b_g=10.0, b_d=100.0)(scores, labels).item() < -10.0
    assert make_loss("learndcg", normalisation="learned", b_g=10.0, b_d=100.0)(scores, labels).item() >= -1.0


def test_canonical_loss_maps_learndcg_fixed_at_defaults_to_approxndcg_bit_for_bit():
    from ltr.losses import canonical_loss

    assert canonical_loss("learndcg_fixed") == ("approxndcg", {})
    assert canonical_loss("LearnDCG_fixed", {"normalisation": "standard", "b_d": 2.0}) == ("approxndcg", {})
    assert canonical_loss("learndcg_fixed", {"b_g": 3.0}) == ("learndcg_fixed", {"b_g": 3.0})
    assert canonical_loss("learndcg_fixed", {"normalisation": "learned"})[0] == "learndcg_fixed"
    assert canonical_loss("learndcg", {}) == ("learndcg", {})
    for scores, labels in _random_batches(30, seed=8):
        v1, g1 = value_and_grad(make_loss("learndcg_fixed"), scores, labels)
        v2, g2 = value_and_grad(make_loss("approxndcg"), scores, labels)
        assert torch.equal(v1, v2) and torch.equal(g1, g2)


# ---------------------------------------------------------------------------- inverse softplus
@pytest.mark.parametrize("value", [1e-300, 1e-8, 0.5, 1.0, 19.9, 20.0, 20.1, 35.0, 709.0, 710.0, 1000.0, 1e6, 1e30])
def test_inverse_softplus_is_stable_and_exact(value):
    from ltr.losses.learndcg import inverse_softplus

    theta = inverse_softplus(value)
    assert math.isfinite(theta)
    # exact softplus (torch's returns x itself above x = 20)
    back = theta + math.log1p(math.exp(-theta)) if theta > 0 else math.log1p(math.exp(theta))
    assert back == pytest.approx(value, rel=1e-12)
    if value >= 40:  # log(1 - e^-b) underflows to nothing: theta is b itself
        assert theta == value


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf"), -float("inf")])
def test_inverse_softplus_refuses_only_values_without_an_inverse(value):
    from ltr.losses.learndcg import inverse_softplus

    with pytest.raises(ValueError, match="cannot invert"):
        inverse_softplus(value)


def test_learndcg_accepts_a_large_discount_base():
    """`--loss-param b_d=1000` used to overflow math.expm1 with a traceback."""
    loss = make_loss("learndcg", b_d=1000.0, b_g=1e4, alpha=50.0)
    assert loss.b_d.item() == pytest.approx(1000.0, rel=1e-6)
    assert loss.b_g.item() == pytest.approx(1e4, rel=1e-6)
    assert loss.alpha.item() == pytest.approx(50.0, rel=1e-6)
    scores, labels = torch.randn(2, 5, requires_grad=True), torch.tensor([[2.0, 1, 0, 0, -1], [0, 1, 0, 0, 0]])
    value = loss(scores, labels)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(scores.grad).all()
    for bad in ({"b_d": 1.0}, {"b_d": float("nan")}, {"alpha": 0.0}, {"b_g": 1e300}):
        with pytest.raises(ValueError):
            make_loss("learndcg", **bad)


def test_the_registry_declares_the_study_losses_in_study_order():
    from ltr.losses import IDENTICAL_AT_DEFAULTS, LEARNABLE_LOSSES, LOSSES
    from ltr.losses._common import RankingLoss

    # the names stored runs, the CLIs and the dashboard use, in the order tables and pages follow
    assert LOSS_NAMES == ("ranknet", "listnet", "listmle", "rmse", "lambdarank", "lambdaloss", "approxndcg",
                          "neuralndcg", "neuralloss", "learndcg", "learndcg_fixed", "learndcg_meta")
    assert LEARNABLE_LOSSES == ("learndcg", "learndcg_meta")
    assert {k: v[0] for k, v in IDENTICAL_AT_DEFAULTS.items()} == {"learndcg_fixed": "approxndcg"}
    loaded = LOSSES.load_all()  # what the modules registered when imported is what their source declares
    assert tuple(loaded) == LOSS_NAMES
    assert all(issubclass(obj, RankingLoss) for name, obj in loaded.items() if name != "learndcg_fixed")
    assert isinstance(make_loss("learndcg_fixed"), RankingLoss)
    assert [n for n, obj in loaded.items() if isinstance(obj, type) and obj.has_hypergradient] == ["learndcg_meta"]
