"""The study's loss names in study order, importable without torch (tables and pages sort by it).

``ltr.losses`` builds its registry in this order (``tests/test_losses.py`` checks they agree).
"""
LOSS_NAMES: tuple[str, ...] = ("ranknet", "listnet", "listmle", "rmse", "lambdarank", "lambdaloss", "approxndcg",
                               "neuralndcg", "neuralloss", "learndcg", "learndcg_fixed", "learndcg_meta")
