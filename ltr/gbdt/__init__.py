"""Gradient-boosted-tree rankers: a model family of their own beside the neural rankers (``ltr.rankers``).

A tree ranker is not trained by a loss module and Adam: LightGBM fits it with its own objective. Its runs
are ordinary runs of the run store (``RunConfig(data, fold, loss=<its objective>, model=<its name>)``), so the
report, the cost scatter and the findings read them like any other: per-query test NDCG under the project's
convention, train seconds, CPU seconds, provenance in the stored config.

- ``lambdamart`` (loss ``lambdamart``): LightGBM's ``lambdarank`` objective (:mod:`ltr.gbdt.lambdamart`).

What the neural fields of :class:`ltr.train.RunConfig` mean for a tree ranker: ``epochs`` is the most boosting
rounds (trees), ``patience`` the rounds without a validation NDCG@10 gain before stopping (0 = never), ``seed``
LightGBM's seed; ``lr``, ``loss_lr``, ``batch_size`` and ``slate_length`` do not apply (LightGBM's learning
rate and tree settings are ``model_params``): a grid leaves its values out of a tree ranker's runs, and a
run given other values than their defaults is refused. This module imports neither torch nor LightGBM.
"""
from __future__ import annotations

# model name -> the loss name its runs are stored under (its LightGBM objective)
GBDT_MODELS = {"lambdamart": "lambdamart"}
GBDT_LOSSES = frozenset(GBDT_MODELS.values())
# RunConfig fields a tree ranker has no use for, with the defaults a run of one must keep
NEURAL_ONLY_FIELDS = ("lr", "loss_lr", "batch_size", "slate_length")


def is_gbdt_model(model: str) -> bool:
    return str(model).lower() in GBDT_MODELS


def gbdt_config_problems(config) -> list[str]:
    """What is wrong with ``config`` as a tree ranker's run (or a tree objective given to a neural ranker)."""
    if not is_gbdt_model(config.model):
        if config.loss in GBDT_LOSSES:
            return [f"loss {config.loss!r} is LightGBM's objective of model "
                    f"{next(m for m, o in GBDT_MODELS.items() if o == config.loss)!r}; "
                    f"train it with --model {config.loss}, not {config.model!r}"]
        return []
    problems = []
    objective = GBDT_MODELS[config.model]
    if config.loss != objective:
        problems.append(f"model {config.model!r} is trained by LightGBM's {objective} objective: its loss is "
                        f"{objective!r}, not {config.loss!r}")
    defaults = type(config).__dataclass_fields__  # the run config's own defaults (no import of ltr.train)
    for name in NEURAL_ONLY_FIELDS:
        if getattr(config, name) != defaults[name].default:
            problems.append(f"{name} does not apply to model {config.model!r} (LightGBM's learning rate and tree "
                            f"settings are model parameters, e.g. --model-param learning_rate=0.05)")
    if config.loss_params:
        problems.append(f"model {config.model!r} takes no loss parameters (LightGBM's are model parameters)")
    return problems
