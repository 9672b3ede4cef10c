"""The on-device step log: LearnDCG's six values and θ gradients as the loss reports them, and
"log every N steps" honoured by the log itself."""
from __future__ import annotations

import pytest
import torch

from ltr.losses import make_loss
from ltr.train import StepLog


def _backward(loss_fn, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(4, 7, generator=gen, requires_grad=True)
    labels = torch.randint(0, 3, (4, 7), generator=gen).float()
    value = loss_fn(scores, labels)
    loss_fn.zero_grad()
    value.backward()
    return value


def test_learndcg_row_matches_what_the_loss_reports():
    loss_fn = make_loss("learndcg", b_g=2.5, b_d=3.0, alpha=0.7)
    log = StepLog(loss_fn, torch.device("cpu"), rows=4)
    value = _backward(loss_fn)
    log.record(0, 0, value)
    (step, epoch, row), = log.drain()
    expected = {"loss": value.item(), **loss_fn.tracked_parameters(),
                **{f"grad_{k}": v for k, v in loss_fn.theta_gradients().items()}}
    assert (step, epoch) == (0, 0) and set(row) == set(expected)
    for name, v in expected.items():
        assert row[name] == pytest.approx(v, rel=1e-6, abs=1e-9), name
    assert row["b_d"] == pytest.approx(3.0) and row["alpha"] == pytest.approx(0.7)


def test_learndcg_meta_row_matches_what_the_loss_reports():
    """LearnDCG-meta's values come from its tracked_tensor(), its θ gradients from theta_tensors() (on the device)."""
    loss_fn = make_loss("learndcg_meta", b_g=2.5, p_d=1.5)
    log = StepLog(loss_fn, torch.device("cpu"), rows=2)
    value = _backward(loss_fn)
    log.record(0, 0, value)
    (_, _, row), = log.drain()
    expected = {"loss": value.item(), **loss_fn.tracked_parameters(),
                **{f"grad_{k}": v for k, v in loss_fn.theta_gradients().items()}}
    assert set(row) == set(expected) == {"loss", "theta_g", "theta_d", "b_g", "p_d", "grad_theta_g", "grad_theta_d"}
    for name, v in expected.items():
        assert row[name] == pytest.approx(v, rel=1e-6, abs=1e-9), name
    assert row["b_g"] == pytest.approx(2.5) and row["p_d"] == pytest.approx(1.5)


def test_a_loss_that_reports_its_parameters_only_as_floats_is_logged_from_them():
    """The base class's hooks: no tracked tensor, no θ tensors; the row is what the loss reports."""
    from ltr.losses._common import RankingLoss

    class FloatsOnly(RankingLoss):
        def forward(self, scores, labels):
            return scores.sum()

        def tracked_parameters(self):
            return {"theta": 0.5, "b": 1.5}

        def theta_gradients(self):
            return {"theta": -0.25}

    log = StepLog(FloatsOnly(), torch.device("cpu"), rows=2)
    log.record(0, 0, torch.tensor(2.0))
    assert log.drain() == [(0, 0, {"loss": 2.0, "theta": 0.5, "b": 1.5, "grad_theta": -0.25})]


def test_fixed_loss_logs_only_its_value():
    log = StepLog(make_loss("ranknet"), torch.device("cpu"), rows=2)
    log.record(0, 0, torch.tensor(0.25))
    assert log.drain() == [(0, 0, {"loss": 0.25})]


def test_log_every_n_steps_is_honoured_by_the_log():
    loss_fn = make_loss("learndcg")
    log = StepLog(loss_fn, torch.device("cpu"), rows=8, every=3)
    for step in range(10):
        log.record(step, step // 5, _backward(loss_fn, seed=step))
    assert [(s, e) for s, e, _ in log.drain()] == [(0, 0), (3, 0), (6, 1), (9, 1)]
