"""Preparing a run without writing anything: names, data, ranker and loss checked and built."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Mapping

import torch

from ltr.memory import MemoryEstimateError, check_training_memory
from ltr.train.config import RunConfig, RunInputError, one_line, resolve_device


@dataclass
class PreparedRun:
    config: RunConfig
    device: torch.device
    splits: dict  # split name -> RankingDataset
    model: torch.nn.Module
    loss_fn: torch.nn.Module
    pretrain_seconds: float | None
    stored_config: dict  # what the store records (result config + data signature)


def prepare_run(config: RunConfig, *, splits: Mapping | None = None) -> PreparedRun:
    """Validate names, load and check the fold, build ranker and loss; raises :class:`RunInputError`.

    ``splits`` (``{"train"|"vali"|"test": RankingDataset}``) are the fold's data already loaded by
    this process (:mod:`ltr.train.inprocess`); they are checked like freshly loaded ones.
    """
    from ltr.data.datasets import DatasetError, load_fold, resolve_dataset
    from ltr.data.letor import LetorFormatError
    from ltr.losses import LOSSES, make_loss
    from ltr.rankers import RANKERS, make_ranker

    if config.loss not in LOSSES.names():
        raise RunInputError(f"unknown loss {config.loss!r}; choose from {', '.join(LOSSES.names())}")
    if config.model not in RANKERS.names():
        raise RunInputError(f"unknown model {config.model!r}; choose from {', '.join(RANKERS.names())}")
    device = resolve_device(config.device)
    try:
        spec, _folder = resolve_dataset(config.data)
        if not 1 <= config.fold <= spec.n_folds:
            raise RunInputError(f"{config.data}: fold {config.fold} does not exist (folds 1..{spec.n_folds})")
        if splits is None:
            splits = {split: load_fold(config.data, config.fold, split) for split in ("train", "vali", "test")}
    except (DatasetError, LetorFormatError, FileNotFoundError) as exc:
        raise RunInputError(one_line(exc)) from None
    for split, ds in splits.items():
        if spec.n_features and ds.n_features != spec.n_features:
            raise RunInputError(f"{config.data} fold {config.fold} {split}: {ds.n_features} features, "
                                f"but {spec.name} has {spec.n_features}")
        if ds.n_queries == 0:
            raise RunInputError(f"{config.data} fold {config.fold} {split}: no queries")
    n_features = splits["train"].n_features
    # The loss first: NeuralLoss may pre-train (consuming RNG) only when its cache is cold, and the
    # run's seed must not depend on that.
    try:
        loss_fn = make_loss(config.loss, **dataset_loss_params(config, spec, splits["train"]))
    except TypeError as exc:  # make_loss already names the loss
        raise RunInputError(one_line(exc)) from None
    except ValueError as exc:
        raise RunInputError(f"bad parameters for loss {config.loss!r}: {one_line(exc)}") from None
    torch.manual_seed(config.seed)
    try:
        model = make_ranker(config.model, n_features, **config.model_params)
    except (TypeError, ValueError) as exc:
        raise RunInputError(f"bad parameters for model {config.model!r}: {one_line(exc)}") from None
    pretrain = loss_fn.pretrain_seconds
    stored = config.result_config()
    stored["data_signature"] = {"n_features": n_features,
                                **{f"{s}_queries": ds.n_queries for s, ds in splits.items()},
                                **{f"{s}_documents": int(ds.labels.shape[0]) for s, ds in splits.items()}}
    stored = json.loads(json.dumps(stored, sort_keys=True))  # as the store gives it back (tuples -> lists)
    model, loss_fn = model.to(device), loss_fn.to(device)
    try:  # refuse a run whose largest step would not fit in memory (see ltr.memory), before any write
        check_training_memory(model, loss_fn, n_features=n_features, list_lengths=splits["train"].list_lengths(),
                              batch_size=config.batch_size, slate_length=config.slate_length, device=device,
                              what=f"{config.data} fold {config.fold} {config.loss}/{config.model}",
                              study_slate_length=spec.study_slate_length)
    except MemoryEstimateError as exc:
        raise RunInputError(str(exc)) from None
    return PreparedRun(config, device, splits, model, loss_fn, None if pretrain is None else float(pretrain), stored)


def dataset_loss_params(config: RunConfig, spec, train) -> dict:
    """The run's loss parameters with the loss's dataset-dependent defaults filled in
    (:meth:`ltr.losses._common.RankingLoss.dataset_defaults`: RMSE's scale, NeuralLoss's surrogate
    ranges); explicit loss parameters win. ``max_grade`` is the spec's, else the training labels'."""
    from ltr.losses import LOSSES
    from ltr.losses._common import TrainingData

    params = dict(config.loss_params)
    max_grade = spec.max_grade if spec.max_grade is not None else int(train.labels.max(initial=0))
    data = TrainingData(max_grade=int(max_grade), list_lengths=train.list_lengths(), slate_length=config.slate_length)
    for name, value in LOSSES.load(config.loss).dataset_defaults(params, data).items():
        params.setdefault(name, value)
    return params
