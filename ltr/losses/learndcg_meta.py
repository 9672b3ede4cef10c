"""LearnDCG-meta: an identifiable learnable NDCG. Its gain and discount *shape* are learned for the
ranker's validation NDCG by a one-step look-ahead hypergradient, not by minimising its own value.

Why the study's LearnDCG cannot identify its parameters (``ltr.losses.learndcg``): with the standard
ideal DCG, b_d only rescales the loss (a learning-rate multiplier that grows every step), and with
the learned ideal DCG any parameter that minimises the training loss over its own values heads for
the flattest surrogate, where every ranking scores 1. Minimising a loss over the loss's own shape is
degenerate; the shape needs a criterion outside itself. This variant fixes both halves:

1. **A shape family where rescaling cancels** (candidate (a) of issue 9). The ideal DCG uses the same
   learned gain and discount, and the discount has a learnable *power*, not a base:

       g(y) = b_g^y - 1,     d(r) = ln(1 + r)^p          b_g = 1 + softplus(theta_g), p = softplus(theta_d)
       L(s; theta) = - mean_q  sum_i g(y_i) / d(pi(i))  /  sum_r g(y_(r)) / d(r)

   with ApproxNDCG's smooth ranks pi (temperature alpha fixed, default 1: alpha scales every score
   gradient, so learning it would again learn a step size). p = 1, b_g = 2 is ApproxNDCG's
   curvature exactly (value up to rounding); p -> 0 is a flat discount, larger p a steeper one.
   theta starts at the study's initial value ln(e - 1).

2. **An outside criterion** (candidate (b)): the ranker's smooth validation NDCG@k after one
   look-ahead step (learning to reweight / meta-learned losses):

       w'(theta) = w - eta * grad_w L_train(w; theta)               (eta: the ranker's learning rate)
       V(theta)  = smooth NDCG@k of f(x_vali; w'(theta))             (``approx_ndcg_at_k``: 2^y - 1,
                                                                      log2 discount, cutoff k)
       dV/dtheta = - eta * d/dtheta [ grad_w L_train(w; theta) . grad_w V(w') ]

   theta.grad is -dV/dtheta / eta (per unit of look-ahead step: Adam is invariant to that scale,
   and at eta ~ 1e-3 the raw hypergradient would sit below Adam's epsilon); the optimiser descends
   it at the loss-parameter learning rate. theta therefore moves
   only while a different shape would make the next ranker update raise validation NDCG@k, and it
   settles where that gain is zero: an interior point (at p -> 0 the surrogate has no ranking signal
   left, so V cannot improve there) that depends on the data and the target metric, not on the
   number of steps taken.

What it does in practice (``bench/learndcg_identifiability.py``, MLP, loss_lr 0.01, 5 folds each):

- its parameters settle instead of drifting: on the MQ2008 sample p ends at 1.21-1.27 on folds that
  trained 54 to 150 steps (final theta_d against steps: slope 0.0003/step, against 0.0136/step for the
  study's variant, whose theta_d tracks the step count with r = 0.999); its theta gradient changes
  sign on 9-30 % of steps, the study's never does;
- it is not better for it. It matched ApproxNDCG on MQ2008 (-0.0007 NDCG@10, p = 0.92), and on the
  synthetic ``conflict`` data it moved to a steeper discount (p 1.34-1.80) although fixed-shape arms
  show a flatter one wins there (p = 0.5: +0.077 over ApproxNDCG; p = 3: -0.199), and it lost 0.10.
  The one-step look-ahead rewards the shape whose next step helps validation NDCG@10 most, which is
  not the shape that trains the best ranker over many steps (the short-horizon bias known from
  hypergradient learning-rate tuning). It identifies *a* criterion; that criterion is greedy.

``learnable=False`` freezes the shape at (b_g, p_d): the fixed-shape arms of an ablation.

Use: the trainer calls :meth:`attach_validation` once with the validation batches and, each step,
:meth:`hypergradient_backward` instead of ``value.backward()``. A plain ``forward`` treats theta as
constants (detached), so ordinary backpropagation can never move them: the only signal theta ever
gets is the hypergradient. Cost per step: one extra backward with ``create_graph`` through ranker
and loss, one forward/backward of the ranker on a validation batch and a second-order backward to
theta (``bench/bench_losses.py`` prints the ratio to ApproxNDCG).
"""
from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ltr.losses import register_loss
from ltr.losses._common import DEFAULT_EPS, check_batch, mean_over
from ltr.losses.approxndcg import approx_ndcg_at_k, approx_ndcg_per_query
from ltr.losses.learndcg import LearnableGainLoss, inverse_softplus


@register_loss("learndcg_meta", order=12, learnable=True)
class LearnDCGMeta(LearnableGainLoss):
    has_hypergradient = True  # θ learns from validation NDCG (the trainer calls the two methods below)

    def __init__(self, b_g: float = 2.0, p_d: float = 1.0, alpha: float = 1.0, *, target_k: int = 10,
                 target_alpha: float = 1.0, learnable: bool = True, eps: float = DEFAULT_EPS):
        super().__init__()
        if b_g <= 1 or p_d <= 0 or alpha <= 0 or target_alpha <= 0 or int(target_k) < 1:
            raise ValueError(f"need b_g > 1, p_d > 0, alpha > 0, target_alpha > 0, target_k >= 1; got b_g={b_g}, "
                             f"p_d={p_d}, alpha={alpha}, target_alpha={target_alpha}, target_k={target_k}")
        self.alpha = float(alpha)
        self.target_k, self.target_alpha, self.eps = int(target_k), float(target_alpha), float(eps)
        self.learnable = bool(learnable)
        self._theta_g = nn.Parameter(torch.tensor(inverse_softplus(b_g - 1.0)), requires_grad=self.learnable)
        self._theta_d = nn.Parameter(torch.tensor(inverse_softplus(p_d)), requires_grad=self.learnable)
        self._validation: list = []

    @property
    def p_d(self) -> Tensor:
        return F.softplus(self._theta_d)

    def _value(self, scores: Tensor, labels: Tensor, theta_g: Tensor, theta_d: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        dtype = scores.dtype
        ndcg = approx_ndcg_per_query(scores, labels, alpha=self.alpha, gain_base=1.0 + F.softplus(theta_g).to(dtype),
                                     ideal="learned", discount_power=F.softplus(theta_d).to(dtype), eps=self.eps)
        return -mean_over(ndcg, real.any(dim=-1))

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        """The training loss with theta held constant (theta learns only from :meth:`hypergradient_backward`)."""
        return self._value(scores, labels, self._theta_g.detach(), self._theta_d.detach())

    # ------------------------------------------------------------------ the outside criterion
    def attach_validation(self, batches: Sequence) -> None:
        """Validation batches (``ListBatch``-like: ``features, labels, mask``); step t uses batch t mod n,
        so a resumed run sees the same sequence."""
        self._validation = list(batches)
        if not self._validation:
            raise ValueError("LearnDCG-meta needs at least one validation batch")

    def target(self, scores: Tensor, labels: Tensor) -> Tensor:
        """V: mean smooth validation NDCG@k over queries with a relevant document."""
        real = check_batch(scores, labels)
        ndcg = approx_ndcg_at_k(scores, labels, self.target_k, alpha=self.target_alpha, eps=self.eps)
        has_relevant = (torch.where(real, labels, torch.zeros_like(labels)) > 0).any(dim=-1)
        return mean_over(ndcg, has_relevant)

    def hypergradient_backward(self, model: nn.Module, scores: Tensor, labels: Tensor, *, step: int,
                               lr: float) -> Tensor:
        """Fill the ranker's ``.grad`` with the training-loss gradient and theta's with -dV/dtheta / lr.

        ``scores = model(features, mask)`` of this step (its graph alive). Returns V at the
        look-ahead weights (detached). Same result as ``value.backward()`` for the ranker.
        """
        if not self.learnable:  # a fixed shape (an ablation arm): plain backpropagation
            self(scores, labels).backward()
            return torch.tensor(float("nan"))
        if not self._validation:
            raise RuntimeError("LearnDCG-meta: attach_validation(...) before training")
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        params = [p for _, p in named]
        value = self._value(scores, labels, self._theta_g, self._theta_d)
        grads = torch.autograd.grad(value, params, create_graph=True, allow_unused=True)
        grads = [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads)]
        for p, g in zip(params, grads):
            p.grad = g.detach().clone()
        ahead = {n: (p - lr * g).detach().requires_grad_(True) for (n, p), g in zip(named, grads)}
        batch = self._validation[step % len(self._validation)]
        was_training = model.training
        model.eval()  # V is the validation metric of the deterministic ranker (no dropout)
        try:
            vali_scores = torch.func.functional_call(model, ahead, (batch.features, batch.mask), strict=False)
        finally:
            model.train(was_training)
        target = self.target(vali_scores, batch.labels)
        thetas = [self._theta_g, self._theta_d]
        v = torch.autograd.grad(target, list(ahead.values()), allow_unused=True)
        dot = sum((g * vi).sum() for g, vi in zip(grads, v) if vi is not None)
        hyper = (torch.autograd.grad(dot, thetas, allow_unused=True) if torch.is_tensor(dot) and dot.requires_grad
                 else (None, None))
        for theta, h in zip(thetas, hyper):
            theta.grad = torch.zeros_like(theta) if h is None else h.detach()
        return target.detach()

    # ------------------------------------------------------------------ what the trainer logs
    def tracked_parameters(self) -> dict[str, float]:
        if not self.learnable:
            return {}
        with torch.no_grad():
            return {"theta_g": self._theta_g.item(), "theta_d": self._theta_d.item(),
                    "b_g": self.b_g.item(), "p_d": self.p_d.item()}

    def theta_gradients(self) -> dict[str, float]:
        if not self.learnable:
            return {}
        return {name: (0.0 if p.grad is None else p.grad.item())
                for name, p in (("theta_g", self._theta_g), ("theta_d", self._theta_d))}

    def tracked_tensor(self) -> Tensor:
        """The values of :meth:`tracked_parameters`, in its order, as one tensor on the device (no host sync)."""
        if not self.learnable:
            return self._theta_g.detach().new_empty(0)
        theta = torch.stack((self._theta_g, self._theta_d)).detach()
        return torch.cat((theta, 1.0 + F.softplus(theta[:1]), F.softplus(theta[1:])))

    def extra_repr(self) -> str:
        return (f"b_g={self.b_g.item():.4g}, p_d={self.p_d.item():.4g}, alpha={self.alpha:.4g}, "
                f"target=NDCG@{self.target_k}")
