"""Preparing a run without writing anything: names, data, ranker and loss checked and built."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import torch

from ltr.memory import MemoryEstimateError, check_training_memory
from ltr.train.config import RunConfig, RunInputError, one_line, resolve_device


@dataclass
class PreparedRun:
    config: RunConfig
    device: torch.device
    splits: dict  # split name -> RankingDataset
    model: torch.nn.Module | None  # None: a tree ranker (ltr.gbdt), built by LightGBM while it trains
    loss_fn: torch.nn.Module | None
    pretrain_seconds: float | None  # the loss's one-time pre-training (NeuralLoss's surrogate), None without
    stored_config: dict  # what the store records (result config + data signature)
    pretrain_paid: bool | None = None  # this run built the pre-trained part (False: loaded from the cache)
    pretrain_key: str | None = None  # what the runs sharing that one-time pre-training have in common


def prepare_run(config: RunConfig, *, splits: Mapping | None = None) -> PreparedRun:
    """Validate names, load and check the fold, build ranker and loss; raises :class:`RunInputError`.

    ``splits`` (``{"train"|"vali"|"test": RankingDataset}``) are the fold's data already loaded by
    this process (:mod:`ltr.train.inprocess`); they are checked like freshly loaded ones.
    """
    from ltr.gbdt import GBDT_MODELS, is_gbdt_model
    from ltr.losses import LOSSES, make_loss
    from ltr.rankers import RANKERS, make_ranker

    if is_gbdt_model(config.model):
        return _prepare_tree_run(config, splits)
    if config.loss not in LOSSES.names():
        raise RunInputError(f"unknown loss {config.loss!r}; choose from {', '.join(LOSSES.names())}")
    if config.model not in RANKERS.names():
        raise RunInputError(f"unknown model {config.model!r}; choose from "
                            f"{', '.join((*RANKERS.names(), *GBDT_MODELS))}")
    device = resolve_device(config.device)
    spec, splits = _fold_splits(config, splits)
    n_features = splits["train"].n_features
    # The loss first: NeuralLoss may pre-train (consuming RNG) only when its cache is cold, and the
    # run's seed must not depend on that.
    try:
        loss_params = dataset_loss_params(config, spec, splits)
        loss_fn = make_loss(config.loss, **loss_params)
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
    stored["data_signature"] = _data_signature(splits)
    # What the loss took from the data set (RMSE's scale and offset, NeuralLoss's surrogate ranges) is part
    # of what produced the result: recorded only where there is some, so other losses' configs are unchanged.
    from_data = {name: value for name, value in loss_params.items() if name not in config.loss_params}
    if from_data:
        stored["loss_dataset_defaults"] = from_data
    if loss_fn.provenance():
        stored["loss_provenance"] = loss_fn.provenance()
    stored = json.loads(json.dumps(stored, sort_keys=True))  # as the store gives it back (tuples -> lists)
    model, loss_fn = model.to(device), loss_fn.to(device)
    try:  # refuse a run whose largest step would not fit in memory (see ltr.memory), before any write
        check_training_memory(model, loss_fn, n_features=n_features, list_lengths=splits["train"].list_lengths(),
                              batch_size=config.batch_size, slate_length=config.slate_length, device=device,
                              what=f"{config.data} fold {config.fold} {config.loss}/{config.model}",
                              study_slate_length=spec.study_slate_length)
    except MemoryEstimateError as exc:
        raise RunInputError(str(exc)) from None
    return PreparedRun(config, device, splits, model, loss_fn, None if pretrain is None else float(pretrain), stored,
                       pretrain_paid=loss_fn.pretrain_paid, pretrain_key=loss_fn.pretrain_key)


def _fold_splits(config: RunConfig, splits: Mapping | None) -> tuple:
    """``(spec, {"train"|"vali"|"test": RankingDataset})`` of the run's fold, read unless given, checked."""
    from ltr.data.datasets import DatasetError, load_fold, resolve_dataset
    from ltr.data.letor import LetorFormatError

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
    return spec, splits


def _data_signature(splits: Mapping) -> dict:
    return {"n_features": splits["train"].n_features,
            **{f"{s}_queries": ds.n_queries for s, ds in splits.items()},
            **{f"{s}_documents": int(ds.labels.shape[0]) for s, ds in splits.items()}}


def _prepare_tree_run(config: RunConfig, splits: Mapping | None) -> PreparedRun:
    """A tree ranker's run (``ltr.gbdt``): the fold and the LightGBM parameters checked, nothing built.
    ``model`` and ``loss_fn`` are None (LightGBM trains it: :func:`ltr.gbdt.lambdamart.train_booster`); the
    stored config adds LightGBM's version and parameters."""
    from ltr.gbdt.lambdamart import provenance

    device = resolve_device(config.device)
    if device.type != "cpu":
        raise RunInputError(f"model {config.model!r} is trained by LightGBM on the CPU: --device {config.device} "
                            f"does not apply")
    _spec, splits = _fold_splits(config, splits)
    try:
        lightgbm = provenance(config)
    except ValueError as exc:
        raise RunInputError(f"bad parameters for model {config.model!r}: {one_line(exc)}") from None
    stored = {**config.result_config(), "data_signature": _data_signature(splits), "lightgbm": lightgbm}
    stored = json.loads(json.dumps(stored, sort_keys=True))
    return PreparedRun(config, device, splits, None, None, None, stored)


def dataset_loss_params(config: RunConfig, spec, splits: Mapping) -> dict:
    """The run's loss parameters with the loss's dataset-dependent defaults filled in
    (:meth:`ltr.losses._common.RankingLoss.dataset_defaults`: RMSE's scale and offset, NeuralLoss's
    surrogate ranges); explicit loss parameters win. ``splits``: the fold's ``train``, ``vali`` (and ``test``,
    which nothing here reads). ``max_grade`` is the spec's, else the training labels'; the list lengths a loss
    may read beyond the training split's are those of the training and validation splits together: nothing a
    loss is built from comes from the test split (issue 41: NeuralLoss's surrogate took the longest list of all
    three, in MQ2008's Fold3 a test list)."""
    from ltr.losses import LOSSES
    from ltr.losses._common import TrainingData

    train = splits["train"]
    params = dict(config.loss_params)
    max_grade = spec.max_grade if spec.max_grade is not None else int(train.labels.max(initial=0))
    seen = np.concatenate([splits[s].list_lengths() for s in ("train", "vali") if s in splits])
    data = TrainingData(max_grade=int(max_grade), list_lengths=train.list_lengths(), slate_length=config.slate_length,
                        mean_grade=float(train.labels.mean()) if train.labels.size else None,
                        seen_list_lengths=seen)
    for name, value in LOSSES.load(config.loss).dataset_defaults(params, data).items():
        params.setdefault(name, value)
    return params
