"""Per-loss hyper-parameter tuning on validation NDCG@10 with Optuna (``python -m ltr tune``).

For one data set, fold, ranker and loss, an Optuna study searches the ranker's learning rate and batch size,
the loss-parameter learning rate of a loss that learns parameters, and the loss's own parameters where it has
them (:data:`LOSS_PARAMETERS`, e.g. ApproxNDCG's alpha), maximising the run's best validation NDCG@10 (the
epoch early stopping keeps, :data:`ltr.train.run.SELECTION_METRIC`):

- **sampler**: TPE, seeded; the sampler of each new trial is seeded by ``(seed, trial number)``, so the
  sequence of trials is a function of the seed and the history, the same after a kill as without one;
- **pruning**: each epoch's validation NDCG@10 is reported to the trial where the trainer stores it
  (:class:`TrialReportingStore`: one report per epoch, nothing per step) and a pruned trial's run is
  cancelled at its next step (stored ``cancelled``, the trial ``PRUNED``); median pruner by default;
- **storage**: the Optuna study lives in SQLite under the cache (``cache/tune/studies.sqlite``), named
  after what it tunes (:func:`study_name`); one process tunes a study at a time (a lock beside it);
- **every trial is a run** of the run store, with its config's run id (``run_id`` user attribute of the
  trial) and experiment ``tune:<study>``: a trial whose run is completed in the store costs no training,
  and a trial left ``RUNNING`` by a killed process is resumed by its own number, with its own parameters,
  from its run's checkpoint, so no trial is lost or repeated. ``trials`` is the study's total.

Executors: ``local`` trains each trial in this process through :func:`ltr.train.inprocess.train_one`, the
entry point of the trainer hosts (fold read once per process); ``ray`` runs each trial as one Ray task of the
existing runner (:func:`ltr.ray_runner.run_one_ray`: the store actor writes its epochs into the same store, its
checkpoint is mirrored), while this process reads the trial's epochs from the store as they arrive
(:class:`EpochWatcher`, every 0.25 s) and reports them; a pruned Ray trial is stopped the way the runner stops a
cancelled grid (the driver's KeyboardInterrupt cancels the task, the run is stored ``cancelled``). The tuned
configuration per loss (:func:`tuned_grid`) is a grid fragment: ``ltr grid --tuned FILE`` applies it.
"""
from __future__ import annotations

import _thread
import fcntl
import math
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

from core.digest import content_digest
from core.paths import cache_subdir
from ltr.losses import LEARNABLE_LOSSES
from ltr.store import RunStore
from ltr.train import RunConfig

SELECTION = "ndcg@10"  # what the trainer selects its epoch by, and what the study maximises
STORAGE_FILE = "studies.sqlite"

# The search space every loss shares (allRank's lr 1e-3 and batch 64 inside it), and the loss-parameter
# learning rate of a loss that learns its parameters.
LR_RANGE = (1e-4, 1e-2)
BATCH_SIZES = (16, 32, 64, 128)
LOSS_LR_RANGE = (1e-4, 1e-1)
# A loss's own parameters: (low, high, log scale), around each constructor's default (ltr/losses/<name>.py).
LOSS_PARAMETERS: dict[str, dict[str, tuple[float, float, bool]]] = {
    "ranknet": {"sigma": (0.1, 10.0, True)},  # pairwise logistic scale, default 1
    "lambdarank": {"sigma": (0.1, 10.0, True)},
    "lambdaloss": {"sigma": (0.1, 10.0, True)},
    "approxndcg": {"alpha": (0.1, 10.0, True)},  # the rank approximation's sigmoid temperature, default 1
    "neuralndcg": {"temperature": (0.1, 10.0, True)},  # NeuralSort's temperature, default 1
}


class TuneError(ValueError):
    """Tuning that cannot start (an unknown loss, a study locked by another process): one line, nothing run."""


@dataclass(frozen=True)
class TrialOutcome:
    number: int
    state: str  # COMPLETE | PRUNED | FAIL
    value: float | None
    params: dict
    run_id: str | None
    trained: bool  # False: the run was already completed in the store (no training)
    resumed: bool  # True: a trial a killed process left RUNNING, finished here by its own number


@dataclass(frozen=True)
class LossTuning:
    loss: str
    study: str
    trials: list[dict]  # every trial of the study: number, state, value, params, run_id
    best: dict | None  # number, value, params, run_id, config (the run's result-defining fields)

    def as_dict(self) -> dict:
        return {"loss": self.loss, "study": self.study, "trials": self.trials, "best": self.best}


def storage_path() -> Path:
    return cache_subdir("tune") / STORAGE_FILE


def search_space(loss: str) -> dict:
    """The space a loss is tuned over (what :func:`study_name` names and the report prints)."""
    space = {"lr": {"low": LR_RANGE[0], "high": LR_RANGE[1], "log": True}, "batch_size": list(BATCH_SIZES)}
    if loss in LEARNABLE_LOSSES:
        space["loss_lr"] = {"low": LOSS_LR_RANGE[0], "high": LOSS_LR_RANGE[1], "log": True}
    for name, (low, high, log) in LOSS_PARAMETERS.get(loss, {}).items():
        space[f"loss_params.{name}"] = {"low": low, "high": high, "log": log}
    return space


def study_name(base: RunConfig, *, sampler_seed: int) -> str:
    """``<data>-f<fold>-<loss>-<model>-<digest>``: the digest covers the fixed result-defining fields (all but
    the tuned ones), the search space and the sampler's seed, so another setting is another study."""
    fixed = {k: v for k, v in base.result_config().items() if k not in ("lr", "batch_size", "loss_lr")}
    digest = content_digest({"fixed": fixed, "space": search_space(base.loss), "sampler_seed": sampler_seed,
                             "objective": f"max best validation {SELECTION}"}, 12)
    return base.run_id.rsplit("-", 1)[0] + f"-{digest}"


def trial_config(base: RunConfig, trial, study: str) -> RunConfig:
    """The run of one trial: ``base`` with the trial's suggestions (a resumed trial gets its stored ones)."""
    lr = trial.suggest_float("lr", *LR_RANGE, log=True)
    batch_size = trial.suggest_categorical("batch_size", list(BATCH_SIZES))
    loss_lr = trial.suggest_float("loss_lr", *LOSS_LR_RANGE, log=True) if base.loss in LEARNABLE_LOSSES \
        else base.loss_lr
    loss_params = dict(base.loss_params)
    for name, (low, high, log) in LOSS_PARAMETERS.get(base.loss, {}).items():
        loss_params[name] = trial.suggest_float(f"loss_params.{name}", low, high, log=log)
    return replace(base, lr=lr, batch_size=int(batch_size), loss_lr=loss_lr, loss_params=loss_params,
                   experiment=f"tune:{study}")


class TrialReportingStore:
    """The run store as a trial's run sees it: after the trainer stores an epoch, its validation NDCG@10 is
    reported to the trial (one report per epoch: no per-step cost) and, if the pruner says so, the run's
    cancel event is set, so the run stops at its next step (stored ``cancelled``). Every other call is the
    store's own."""

    def __init__(self, store: RunStore, trial, cancel: threading.Event):
        self._store, self._trial, self._cancel = store, trial, cancel
        self.pruned_at: int | None = None

    def __getattr__(self, name):
        return getattr(self._store, name)

    def log_epoch(self, run_id: str, epoch: int, metrics) -> None:
        self._store.log_epoch(run_id, epoch, metrics)
        self._trial.report(float(metrics[SELECTION]), int(epoch))
        if self.pruned_at is None and self._trial.should_prune():
            self.pruned_at = int(epoch)
            self._cancel.set()


def best_validation(store: RunStore, run_id: str) -> float | None:
    """The best validation NDCG@10 over the run's stored epochs (the epoch the trainer kept); None without one."""
    series = store.epoch_series([run_id], [SELECTION])
    if series.empty:
        return None
    value = float(series["value"].max())
    return value if math.isfinite(value) else None


@contextmanager
def _study_lock(name: str) -> Iterator[None]:
    """One tuning process per study: the kernel releases the lock when its holder dies (a kill included)."""
    path = cache_subdir("tune") / f"{name}.lock"
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TuneError(f"study {name} is being tuned by another process right now") from None
        yield


def _open_study(name: str, *, pruner=None):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.RDBStorage(f"sqlite:///{storage_path()}")
    return optuna.create_study(study_name=name, storage=storage, direction="maximize", load_if_exists=True,
                               pruner=pruner if pruner is not None else optuna.pruners.MedianPruner(
                                   n_startup_trials=3, n_warmup_steps=1))


def _seeded_sampler(seed: int, number: int):
    """TPE seeded by (seed, trial number): a new trial's suggestion depends on the seed and the history only."""
    import optuna

    return optuna.samplers.TPESampler(seed=int(content_digest([seed, number], 8), 16))


class EpochWatcher(threading.Thread):
    """Reports a Ray trial's epochs as the store actor writes them (this process reads the same store every
    ``poll`` seconds) and, when the pruner says so, interrupts the main thread, where the Ray runner cancels
    the task as it does for Ctrl-C. It interrupts only while the Ray call is running (:meth:`ray_call_ended`
    closes that window under the same lock), so the interrupt always lands where :func:`_train_on_ray` catches it."""

    def __init__(self, store_path: Path, run_id: str, trial, poll: float = 0.25):
        super().__init__(daemon=True, name=f"tune-watch-{run_id}")
        self.store_path, self.run_id, self.trial, self.poll = store_path, run_id, trial, poll
        self.stop, self.pruned_at = threading.Event(), None
        self._reported: set[int] = set()
        self._lock, self._in_ray_call = threading.Lock(), True

    def ray_call_ended(self) -> None:
        with self._lock:
            self._in_ray_call = False

    def report_new(self, store: RunStore) -> None:
        for epoch, value in _epochs(store, self.run_id):
            if epoch in self._reported:
                continue
            self._reported.add(epoch)
            self.trial.report(value, epoch)
            with self._lock:
                if self._in_ray_call and self.pruned_at is None and self.trial.should_prune():
                    self.pruned_at = epoch
                    self.stop.set()
                    _thread.interrupt_main()  # the Ray runner's KeyboardInterrupt path: cancel the task
                    return

    def run(self) -> None:
        with RunStore(self.store_path) as store:
            while not self.stop.wait(self.poll):
                self.report_new(store)


def tune_loss(base: RunConfig, trials: int, *, store_path: str | Path | None = None, sampler_seed: int = 0,
              pruner=None, progress: Callable[[str], None] | None = None, ray_settings=None) -> LossTuning:
    """Run the study of ``base``'s loss up to ``trials`` trials in all (finished ones count; a trial a killed
    process left running is finished first, by its own number) and return every trial and the best.
    ``ray_settings`` (:class:`core.ray_cluster.RaySettings`): each trial is a Ray task; else in this process."""
    import optuna
    from optuna.trial import TrialState

    from ltr.store import default_store_path

    say = progress or (lambda _msg: None)
    name = study_name(base, sampler_seed=sampler_seed)
    store_path = Path(store_path) if store_path else default_store_path()
    with _study_lock(name), RunStore(store_path) as store:
        study = _open_study(name, pruner=pruner)
        for frozen in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            say(f"{name}: resuming trial {frozen.number} (left running by a process that ended)")
            _run_trial(optuna.trial.Trial(study, frozen._trial_id), base, name, store, say, resumed=True,
                       ray_settings=ray_settings)
        while len(study.get_trials(deepcopy=False)) < trials:
            study.sampler = _seeded_sampler(sampler_seed, len(study.get_trials(deepcopy=False)))
            _run_trial(study.ask(), base, name, store, say, resumed=False, ray_settings=ray_settings)
        return _summary(study, base.loss, name, store)


@dataclass(frozen=True)
class _Trained:
    status: str  # completed | cancelled | failed | bad input
    message: str
    trained: bool
    pruned_at: int | None


def _train_here(config: RunConfig, trial, store: RunStore, say) -> _Trained:
    from ltr.train.inprocess import train_one

    cancel = threading.Event()
    reporting = TrialReportingStore(store, trial, cancel)
    outcome = train_one(config, reporting, cancel=cancel, progress=lambda msg: say(f"  trial {trial.number}: {msg}"))
    trained = outcome.status != "completed" or bool(outcome.result and outcome.result.retrained)
    return _Trained(outcome.status, outcome.message, trained, reporting.pruned_at)


def _train_on_ray(config: RunConfig, trial, store: RunStore, settings) -> _Trained:
    from ltr.ray_runner import run_one_ray

    done = store.find_run(config.run_id)
    if done is not None and done["status"] == "completed":
        return _Trained("completed", "already completed", False, None)
    watcher = EpochWatcher(Path(store.path), config.run_id, trial)
    watcher.start()
    try:
        try:
            outcome = run_one_ray(config, store.path, settings)
        finally:
            watcher.ray_call_ended()
    except KeyboardInterrupt:
        if watcher.pruned_at is None:
            raise  # Ctrl-C or SIGTERM: the trial stays RUNNING, resumed next time
        run = store.find_run(config.run_id)
        if run is not None and run["status"] == "completed":  # it finished before the cancel reached it
            return _Trained("completed", "", True, None)
        return _Trained("cancelled", "pruned", True, watcher.pruned_at)
    finally:
        watcher.stop.set()
        watcher.join()
    watcher.report_new(store)  # the epochs stored after the last look (a finished run's last ones)
    if outcome.completed:
        return _Trained("completed", "", True, None)
    if outcome.cancelled:
        return _Trained("cancelled", "cancelled on Ray", True, None)
    return _Trained("failed", outcome.failed.get(config.run_id, "failed on Ray"), True, None)


def _run_trial(trial, base: RunConfig, study: str, store: RunStore, say, *, resumed: bool,
               ray_settings=None) -> TrialOutcome:
    from optuna.trial import TrialState

    config = trial_config(base, trial, study)
    trial.set_user_attr("run_id", config.run_id)
    if ray_settings is not None:
        outcome = _train_on_ray(config, trial, store, ray_settings)
    else:
        outcome = _train_here(config, trial, store, say)
    trained = outcome.trained
    if outcome.status == "completed":
        value = best_validation(store, config.run_id)
        study_obj = trial.study
        if value is None:
            study_obj.tell(trial.number, state=TrialState.FAIL)
        else:
            if not trained:  # a run completed before this trial: its curve, for the pruner's medians
                for epoch, v in _epochs(store, config.run_id):
                    trial.report(v, epoch)
            study_obj.tell(trial.number, value)
        state = "COMPLETE" if value is not None else "FAIL"
    elif outcome.status == "cancelled" and outcome.pruned_at is not None:
        trial.set_user_attr("pruned_at_epoch", outcome.pruned_at)
        run = store.find_run(config.run_id)
        if run is not None and run["status"] == "cancelled":  # say why, where the Results page lists it
            store.fail_run(config.run_id, f"pruned by ltr tune after epoch {outcome.pruned_at} (study {study}, "
                                          f"trial {trial.number}); its validation NDCG@10 trailed the other trials'",
                           status="cancelled")
        trial.study.tell(trial.number, state=TrialState.PRUNED)
        state, value = "PRUNED", None
    elif outcome.status == "cancelled":  # SIGTERM or Ctrl-C: the trial stays RUNNING, resumed next time
        raise KeyboardInterrupt(f"trial {trial.number} cancelled: {outcome.message}")
    else:
        trial.set_user_attr("error", outcome.message)
        trial.study.tell(trial.number, state=TrialState.FAIL)
        state, value = "FAIL", None
    say(f"{study}: trial {trial.number} {state.lower()}" + (f" best vali {SELECTION} {value:.4f}" if value else "")
        + ("" if trained else " (already completed in the run store: no training)"))
    return TrialOutcome(trial.number, state, value, dict(trial.params), config.run_id, trained, resumed)


def _epochs(store: RunStore, run_id: str) -> list[tuple[int, float]]:
    series = store.epoch_series([run_id], [SELECTION])
    return [(int(e), float(v)) for e, v in zip(series["epoch"], series["value"])]


def _summary(study, loss: str, name: str, store: RunStore) -> LossTuning:
    from optuna.trial import TrialState

    rows = [{"number": t.number, "state": t.state.name, "value": t.value, "params": dict(t.params),
             "run_id": t.user_attrs.get("run_id")} for t in study.get_trials(deepcopy=False)]
    complete = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))]
    best = None
    if complete:
        top = max(complete, key=lambda t: (t.value, -t.number))
        run = store.find_run(top.user_attrs.get("run_id", ""))
        best = {"number": top.number, "value": top.value, "params": dict(top.params),
                "run_id": top.user_attrs.get("run_id"),
                "config": {k: v for k, v in (run or {}).get("config", {}).items() if k in RunConfig.RESULT_FIELDS}}
    return LossTuning(loss, name, rows, best)


def tuned_grid(results: Sequence[LossTuning]) -> dict:
    """The tuned settings as a grid fragment: ``overrides.loss.<loss>`` (lr, batch_size, loss_lr) and
    ``loss_params.<loss>`` (the tuned loss parameters), for :func:`apply_tuned`."""
    overrides, loss_params = {}, {}
    for result in results:
        if result.best is None:
            continue
        config = result.best["config"]
        overrides[result.loss] = {k: config[k] for k in ("lr", "batch_size") if k in config}
        if result.loss in LEARNABLE_LOSSES and "loss_lr" in config:
            overrides[result.loss]["loss_lr"] = config["loss_lr"]
        tuned = {k.split(".", 1)[1]: v for k, v in result.best["params"].items() if k.startswith("loss_params.")}
        if tuned:
            loss_params[result.loss] = tuned
    return {"overrides": {"loss": overrides}, "loss_params": loss_params}


def apply_tuned(spec: dict, tuned: dict) -> dict:
    """A grid mapping with the tuned settings (a :func:`tuned_grid` fragment, or the ``ltr tune --json``
    document holding one under ``grid``) merged in: per-loss overrides win over ``[train]``, tuned loss
    parameters are added to the grid's own (``normalisation`` etc. kept)."""
    fragment = tuned.get("grid", tuned)
    out = dict(spec)
    overrides = {kind: {k: dict(v) for k, v in table.items()} for kind, table in (spec.get("overrides") or {}).items()}
    for loss, values in (fragment.get("overrides") or {}).get("loss", {}).items():
        overrides.setdefault("loss", {}).setdefault(loss, {}).update(values)
    params = {loss: dict(values) for loss, values in (spec.get("loss_params") or {}).items()}
    for loss, values in (fragment.get("loss_params") or {}).items():
        params.setdefault(loss, {}).update(values)
    out["overrides"], out["loss_params"] = overrides, params
    return out
