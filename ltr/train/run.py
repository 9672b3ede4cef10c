"""Training one run end to end: store bookkeeping, cancellation by signal, the epoch loop, the test."""
from __future__ import annotations

import json
import math
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
import numpy as np

from core.export import git_state
from core.signals import sigterm_raises
from core.threads import apply_torch_threads
from ltr.ndcg_conventions import NDCG_CUTOFFS, N_RELEVANT, metric_name
from ltr.store import RunBusy, RunConfigMismatch, RunStore, run_is_live
from ltr.train.checkpoint import (CHECKPOINT_FORMAT, checkpoint_path, clone_state, load_checkpoint, rng_state,
                                  save_checkpoint, set_rng_state)
from ltr.train.config import RunCancelled, RunConfig, RunInputError, one_line
from ltr.train.epoch_gate import wait_at_epoch_gate
from ltr.train.loop import (EVAL_BATCH_SIZE, FLUSH_SECONDS, build_optimizer, evaluate, make_batcher, train_epoch,
                             warm_up)
from ltr.train.prepare import PreparedRun, prepare_run
from ltr.train.steplog import StepLog
from ltr.train.summary import run_summary

SELECTION_METRIC = "ndcg@10"


@dataclass
class RunResult:
    run_id: str
    status: str
    retrained: bool  # False when the stored result of a completed run was returned
    summary: dict  # :func:`run_summary` of the run (the ``--out`` JSON)


def train_run(config: RunConfig, store: RunStore, resume: bool = True, *, force: bool = False,
              prepared: PreparedRun | None = None, progress: Callable[[str], None] | None = None,
              cancel: threading.Event | None = None) -> RunResult:
    """Train (or resume, or just look up) the run of ``config``; see the module docstring.

    ``resume=False`` discards a checkpoint and starts over; ``force=True`` also retrains a run
    that completed (and replaces a stored run whose configuration no longer matches). Setting
    ``cancel`` (from any thread) stops the run at its next step like SIGTERM does: it is marked
    ``cancelled`` and :class:`RunCancelled` is raised.
    """
    run_id = config.run_id
    prepared = prepared or prepare_run(config)
    existing = store.find_run(run_id)
    if existing is not None:
        if run_is_live(existing):
            raise RunInputError(f"run {run_id} is being trained right now by pid {existing['pid']} "
                                f"on {existing['host']}")
        if existing["config"] != prepared.stored_config and not force:
            raise RunInputError(f"run {run_id} is stored with a different configuration or data "
                                f"(stored {json.dumps(existing['config'], sort_keys=True)}); "
                                f"use --force to replace it")
        if force:
            store.delete_run(run_id)
            checkpoint_path(store, run_id).unlink(missing_ok=True)
            existing = None
        elif existing["status"] == "completed":
            return RunResult(run_id, "completed", False, run_summary(store, run_id))
    try:
        store.register_run(run_id, prepared.stored_config, experiment=config.experiment,
                           total_epochs=config.epochs)
    except RunConfigMismatch as exc:  # a concurrent writer registered it differently meanwhile
        raise RunInputError(one_line(exc)) from None
    ckpt_path = checkpoint_path(store, run_id)
    if existing is None or not resume:
        ckpt_path.unlink(missing_ok=True)  # a leftover from a deleted store must not be resumed
    try:
        with _sigterm_cancels():
            # The process's current choice (core.threads): a host's train_one chose it afresh for this run.
            threads = apply_torch_threads().threads
            try:
                store.start_run(run_id, device=str(prepared.device), threads=threads)
            except RunBusy as exc:
                raise RunInputError(one_line(exc)) from None
            store.record_code(run_id, **git_state(), platform=numeric_platform())  # which code trained it (issue 41)
            if prepared.model is None:  # a tree ranker (ltr.gbdt): LightGBM boosts it, no epochs of Adam
                _train_tree(prepared, store, threads, progress or (lambda _msg: None), cancel)
            else:
                _train(prepared, store, ckpt_path, progress or (lambda _msg: None), cancel)
    except RunInputError:
        raise
    except (RunCancelled, KeyboardInterrupt) as exc:
        store.fail_run(run_id, f"cancelled ({type(exc).__name__}); resume to continue", status="cancelled")
        raise
    except BaseException as exc:
        tb = traceback.format_exception(exc)
        store.fail_run(run_id, f"{type(exc).__name__}: {one_line(exc)}\n{''.join(tb[-6:])}")
        raise
    return RunResult(run_id, "completed", True, run_summary(store, run_id))


def numeric_platform() -> str:
    """What a run's bits depend on beyond its code and thread count: torch's version and the CPU kernels it
    dispatches to (MKL's AVX2 and AVX-512 paths round differently)."""
    import platform

    return f"torch {torch.__version__}, cpu {torch.backends.cpu.get_cpu_capability()}, {platform.machine()}"


def _sigterm_cancels():
    return sigterm_raises(lambda signum: RunCancelled(f"signal {signum}"), chain_previous=True)


def _train(p: PreparedRun, store: RunStore, ckpt_path: Path, progress: Callable[[str], None],
           cancel: threading.Event | None) -> None:
    cfg, device, run_id = p.config, p.device, p.config.run_id
    model, loss_fn = p.model, p.loss_fn
    optimizer = build_optimizer(model, loss_fn, cfg.lr, cfg.effective_loss_lr)
    train_b = make_batcher(p.splits["train"], device, cfg.batch_size, slate_length=cfg.slate_length,
                           shuffle=True, seed=cfg.seed)
    eval_bs = max(cfg.batch_size, EVAL_BATCH_SIZE)
    vali_b = make_batcher(p.splits["vali"], device, eval_bs)
    step_log = StepLog(loss_fn, device, rows=cfg.flush_every, every=cfg.log_every)
    if loss_fn.has_hypergradient:  # learndcg_meta's outside criterion: training-sized vali batches
        loss_fn.attach_validation(list(make_batcher(p.splits["vali"], device, cfg.batch_size)))

    state = {"epoch": 0, "step": 0, "best_metric": -math.inf, "best_epoch": -1, "bad_epochs": 0,
             "stopped": False, "train_seconds": 0.0, "cpu_seconds": 0.0}
    best_model, best_loss = clone_state(model), clone_state(loss_fn)
    ckpt = load_checkpoint(ckpt_path, run_id)
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
        loss_fn.load_state_dict(ckpt["loss"])
        optimizer.load_state_dict(ckpt["optimizer"])
        best_model, best_loss = ckpt["best_model"], ckpt["best_loss"]
        state.update(ckpt["counters"])
        set_rng_state(ckpt["rng"])
        progress(f"resuming {run_id} after epoch {state['epoch'] - 1} (step {state['step']})")
    store.truncate_after(run_id, step=state["step"], epoch=state["epoch"])
    warm_up(model, loss_fn, train_b, state["epoch"], device)

    last_beat = [time.monotonic()]

    def flush() -> None:
        rows = step_log.drain()
        if rows:
            store.log_steps(run_id, rows)  # also beats the heartbeat
        else:
            store.heartbeat(run_id)
        last_beat[0] = time.monotonic()

    def tick() -> None:
        if cancel is not None and cancel.is_set():
            raise RunCancelled("cancel requested")
        if time.monotonic() - last_beat[0] > FLUSH_SECONDS:
            flush()

    while not state["stopped"] and state["epoch"] < cfg.epochs:
        wait_at_epoch_gate(state["epoch"], tick)  # tests only: see ltr.train.epoch_gate
        epoch, started, cpu_started = state["epoch"], time.perf_counter(), time.process_time()
        step, mean_loss = train_epoch(model, loss_fn, optimizer, train_b, epoch, state["step"],
                                      step_log=step_log, on_flush=flush,
                                      cancel=cancel)
        if device.type == "cuda":
            torch.cuda.synchronize(device)  # the loop's kernels belong to its time
        # Training time = the training loop alone (not validation, checkpoints or start-up); its
        # CPU seconds (all threads) beside the wall seconds tell contention from a slow loss.
        loop_seconds, loop_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        flush()
        vali = evaluate(model, vali_b, p.splits["vali"].n_queries, NDCG_CUTOFFS, tick).mean(dim=1).tolist()
        seconds = time.perf_counter() - started
        metrics = {f"ndcg@{k}": v for k, v in zip(NDCG_CUTOFFS, vali)}
        selected = metrics[SELECTION_METRIC]
        if selected > state["best_metric"]:
            state.update(best_metric=selected, best_epoch=epoch, bad_epochs=0)
            best_model, best_loss = clone_state(model), clone_state(loss_fn)
        else:
            state["bad_epochs"] += 1
        state.update(epoch=epoch + 1, step=step, train_seconds=state["train_seconds"] + loop_seconds,
                     cpu_seconds=state.get("cpu_seconds", 0.0) + loop_cpu,
                     stopped=bool(cfg.patience) and state["bad_epochs"] >= cfg.patience)
        # Store first, checkpoint second: a checkpoint always has its epoch in the store.
        # the loss's learned parameters as this epoch leaves them: the best epoch's are those of the model tested
        store.log_epoch(run_id, epoch, {**metrics, "seconds": seconds, "train_seconds": loop_seconds,
                                        "cpu_seconds": loop_cpu, "train_loss": float(mean_loss),
                                        **loss_fn.tracked_parameters()})
        save_checkpoint(ckpt_path, {
            "format": CHECKPOINT_FORMAT, "run_id": run_id, "model": model.state_dict(),
            "loss": loss_fn.state_dict(), "optimizer": optimizer.state_dict(), "best_model": best_model,
            "best_loss": best_loss, "counters": dict(state), "rng": rng_state()})
        progress(f"epoch {epoch}: vali ndcg@10 {selected:.4f} (best {state['best_metric']:.4f} at "
                 f"{state['best_epoch']}) loss {float(mean_loss):.4f} {seconds:.1f}s")

    model.load_state_dict(best_model)
    test_ds = p.splits["test"]
    per_query = evaluate(model, make_batcher(test_ds, device, eval_bs), test_ds.n_queries, NDCG_CUTOFFS, tick).cpu()
    finish_with_test(store, run_id, test_ds, per_query, train_seconds=state["train_seconds"],
                     cpu_seconds=state.get("cpu_seconds"), pretrain_seconds=p.pretrain_seconds,
                     pretrain_paid=p.pretrain_paid, pretrain_key=p.pretrain_key,
                     best_epoch=state["best_epoch"], progress=progress)
    ckpt_path.unlink(missing_ok=True)


def _train_tree(p: PreparedRun, store: RunStore, threads: int, progress: Callable[[str], None],
                cancel: threading.Event | None) -> None:
    """A tree ranker's run (:func:`ltr.gbdt.lambdamart.train_booster`): each round stored as an epoch, the trees
    up to the best round tested like every run. No checkpoint: a restarted run starts over."""
    from ltr.gbdt.lambdamart import BoosterRanker, train_booster

    run_id = p.config.run_id
    store.truncate_after(run_id, step=0, epoch=0)

    def check_cancel() -> None:
        if cancel is not None and cancel.is_set():
            raise RunCancelled("cancel requested")

    boosted = train_booster(p.splits, p.config, threads, selection=SELECTION_METRIC,
                            log_round=lambda k, metrics: store.log_epoch(run_id, k, metrics), progress=progress,
                            check_cancel=check_cancel)
    test = p.splits["test"]
    ranker = BoosterRanker(boosted.booster, boosted.best_round + 1)
    per_query = evaluate(ranker, make_batcher(test, torch.device("cpu"), EVAL_BATCH_SIZE), test.n_queries)
    finish_with_test(store, run_id, test, per_query.cpu(), train_seconds=boosted.train_seconds,
                     cpu_seconds=boosted.cpu_seconds, pretrain_seconds=None, best_epoch=boosted.best_round,
                     progress=progress)


def finish_with_test(store: RunStore, run_id: str, test_ds, per_query: torch.Tensor, *, train_seconds: float,
                     cpu_seconds: float | None, pretrain_seconds: float | None, best_epoch: int,
                     progress: Callable[[str], None], pretrain_paid: bool | None = None,
                     pretrain_key: str | None = None) -> None:
    """Store the selected model's test result (``per_query``: NDCG@k of every test query, ``[len(NDCG_CUTOFFS), Q]``)
    and mark the run completed: what every model family's run ends with."""
    means = {f"ndcg@{k}": float(per_query[i].mean()) for i, k in enumerate(NDCG_CUTOFFS)}
    # stored names carry their convention (ndcg@10(gain=exp,norel=1)); the relevant-document count per
    # query lets a report leave out queries that score 1 under every loss by convention
    per_query_map = {metric_name(k): dict(zip(test_ds.qids, per_query[i].tolist())) for i, k in enumerate(NDCG_CUTOFFS)}
    relevant = np.add.reduceat((test_ds.labels > 0).astype(np.float64), test_ds.query_ptr[:-1]) \
        if test_ds.n_queries else np.zeros(0)
    per_query_map[N_RELEVANT] = dict(zip(test_ds.qids, relevant.tolist()))
    store.finish_run(run_id, test_means=means, per_query=per_query_map, train_seconds=train_seconds,
                     pretrain_seconds=pretrain_seconds, best_epoch=best_epoch, cpu_seconds=cpu_seconds,
                     pretrain_paid=pretrain_paid, pretrain_key=pretrain_key)
    progress("test " + " ".join(f"{k} {v:.4f}" for k, v in means.items()))
