"""The study's loss names in study order, and those that learn loss parameters, importable without torch
(tables and pages sort and label by them; the Results page never imports torch).

``ltr.losses`` builds its registry in this order (``tests/ltr/losses/test_losses.py`` checks they agree).
"""
LOSS_NAMES: tuple[str, ...] = ("ranknet", "listnet", "listmle", "rmse", "lambdarank", "lambdaloss", "approxndcg",
                               "neuralndcg", "neuralloss", "learndcg", "learndcg_fixed", "learndcg_meta")
# Losses with learnable parameters (trained at the loss-parameter learning rate ``loss_lr``; they log θ).
LEARNABLE_LOSSES: tuple[str, ...] = ("learndcg", "learndcg_meta")
# name -> (the loss it equals at its default parameters, why); see ltr.losses.canonical_loss
IDENTICAL_AT_DEFAULTS = {"learndcg_fixed": ("approxndcg", "identical by construction: LearnDCG frozen at "
                                            "b_g = b_d = 2, alpha = 1 is ApproxNDCG(alpha = 1), value and gradient")}
