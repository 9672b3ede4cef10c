"""Per-loss hyper-parameter tuning on validation NDCG@10 with Optuna (``python -m ltr tune``).

For one data set, fold, ranker and loss, an Optuna study searches the ranker's learning rate and batch size,
the loss-parameter learning rate of a loss that learns parameters, and the loss's own parameters where it has
them (:data:`LOSS_PARAMETERS`: RankNet's, LambdaRank's and LambdaLoss's sigma, LambdaLoss's weighing scheme,
ApproxNDCG's and NeuralNDCG's temperatures, LearnDCG's initial b_g, b_d and alpha), maximising the run's best
validation NDCG@10 (the epoch early stopping keeps, :data:`ltr.train.run.SELECTION_METRIC`). LambdaMART's study
(model ``lambdamart``) searches LightGBM's num_leaves, learning_rate, min_data_in_leaf, feature_fraction and
bagging_fraction (:data:`GBDT_PARAMETERS`, bagging every round) with up to 1,000 trees and early stopping 50
rounds after the best validation NDCG@10. :func:`search_space` gives each space as the report prints it.

- **sampler**: TPE with :data:`N_STARTUP_TRIALS` (10) random start-up trials, so a budget of
  :data:`DEFAULT_TRIALS` (30) gives TPE 20 trials of its own; the sampler of each new trial is seeded by
  ``(study name, trial number)``: the name covers the loss, fold, fixed settings and ``sampler_seed``, so every
  study draws its own points, and the sequence of trials is a function of the study and its history, the same
  after a kill as without one;
- **pruning**: each epoch's validation NDCG@10 is reported to the trial where the trainer stores it
  (:class:`TrialReportingStore`: one report per epoch, nothing per step) and a pruned trial's run is
  cancelled at its next step (stored ``cancelled``, the trial ``PRUNED``); median pruner by default;
- **storage**: the Optuna study lives in SQLite under the cache (``cache/tune/studies.sqlite``), named
  after what it tunes (:func:`study_name`); one process tunes a study at a time (a lock beside it);
- **every trial is a run** of the run store, with its config's run id (``run_id`` user attribute of the
  trial) and experiment ``tune:<study>``: a trial whose run is completed in the store costs no training,
  and a trial left ``RUNNING`` by a killed process is resumed by its own number, with its own parameters,
  from its run's checkpoint, so no trial is lost or repeated. ``trials`` is the study's total;
- **what ran** (:class:`LossTuning`) is read from the study: its trials and their states, the sampler and its
  start-up count, the pruner, the space, and the wall and CPU seconds of every session that tuned it (kept
  in the study's user attributes), beside the trials' training seconds from the run store.

:func:`tune_studies` tunes several studies (losses, folds) at once, each in a process of its own.

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
import resource
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from core.digest import content_digest
from core.paths import cache_subdir
from ltr.gbdt import is_gbdt_model

if TYPE_CHECKING:  # torch and the run store load where a study runs, not where the CLI reads the defaults
    from ltr.store import RunStore
    from ltr.train import RunConfig

SELECTION = "ndcg@10"  # what the trainer selects its epoch by, and what the study maximises
STORAGE_FILE = "studies.sqlite"
# TPE samples at random for its first N_STARTUP_TRIALS trials (Optuna's default 10, stated here because the
# budget must exceed it for TPE to model anything), then from its density model; DEFAULT_TRIALS is the budget
# a study gets unless told otherwise (issue 41: at least 30, so 20 trials are TPE's own).
N_STARTUP_TRIALS = 10
DEFAULT_TRIALS = 30


@dataclass(frozen=True)
class Dimension:
    """One tuned setting: a float or int range (``log``: sampled on a log scale) or a set of choices."""

    kind: str  # float | int | categorical
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple = ()

    def suggest(self, trial, name: str):
        if self.kind == "categorical":
            return trial.suggest_categorical(name, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(name, self.low, self.high, log=self.log)

    def as_dict(self) -> dict:
        if self.kind == "categorical":
            return {"choices": list(self.choices)}
        return {"low": self.low, "high": self.high, "log": self.log, **({"int": True} if self.kind == "int" else {})}


def _float(low, high, log=False) -> Dimension:
    return Dimension("float", low, high, log)


# The space every neural loss shares (allRank's lr 1e-3 and batch 64 inside it), and the loss-parameter
# learning rate of a loss that learns its parameters.
LR = _float(1e-4, 1e-2, log=True)
BATCH_SIZE = Dimension("categorical", choices=(16, 32, 64, 128))
LOSS_LR = _float(1e-4, 1e-1, log=True)
# A loss's own parameters, around each constructor's default (ltr/losses/<name>.py); losses not named here
# (ListNet, ListMLE, RMSE, NeuralLoss) have none a run may tune.
LOSS_PARAMETERS: dict[str, dict[str, Dimension]] = {
    "ranknet": {"sigma": _float(0.1, 10.0, log=True)},  # pairwise logistic scale, default 1
    "lambdarank": {"sigma": _float(0.1, 10.0, log=True)},
    "lambdaloss": {"sigma": _float(0.1, 10.0, log=True),
                   # the weighing scheme (the paper's variants; its ranknet and lambdarank schemes are those losses)
                   "scheme": Dimension("categorical", choices=("ndcgloss1", "ndcgloss2", "ndcgloss2pp"))},
    "approxndcg": {"alpha": _float(0.1, 10.0, log=True)},  # the rank approximation's sigmoid temperature, default 1
    "neuralndcg": {"temperature": _float(0.1, 10.0, log=True)},  # NeuralSort's temperature, default 1
    # where LearnDCG's learned gain base, discount base and temperature start (default 2, 2, 1; the paper
    # reports b_d near 1.8, which a start at 2 cannot reach: ltr/losses/learndcg.py)
    "learndcg": {"b_g": _float(1.2, 4.0, log=True), "b_d": _float(1.2, 4.0, log=True),
                 "alpha": _float(0.1, 10.0, log=True)},
}
# LambdaMART (LightGBM lambdarank): its tree and boosting settings (model parameters), at most GBDT_ROUNDS trees
# with early stopping GBDT_PATIENCE rounds after the best validation NDCG@10; bagging every GBDT_FIXED round.
GBDT_PARAMETERS: dict[str, Dimension] = {
    "num_leaves": Dimension("int", 7, 255, log=True),
    "learning_rate": _float(0.01, 0.3, log=True),
    "min_data_in_leaf": Dimension("int", 5, 200, log=True),
    "feature_fraction": _float(0.5, 1.0),
    "bagging_fraction": _float(0.5, 1.0),
}
GBDT_FIXED = {"bagging_freq": 1}
GBDT_ROUNDS, GBDT_PATIENCE = 1000, 50
GBDT_REPORT_EVERY = 10  # rounds between a tree trial's reports to its study (:func:`report_every`)
# Median pruning: a trial stops where its validation NDCG@10 is below the median of the finished trials at
# the same epoch (neural) or boosting round (LambdaMART: not before round 100, where learning rates differ most).
PRUNER = {"n_startup_trials": 3, "n_warmup_steps": 1}
GBDT_PRUNER = {"n_startup_trials": 5, "n_warmup_steps": 100}


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
    """One study as it stands, read from the study and the run store (what ran, not what was asked for)."""

    loss: str
    study: str
    trials: list[dict]  # every trial of the study: number, state, value, params, run_id
    best: dict | None  # number, value, params, run_id, config (the run's result-defining fields)
    model: str = "mlp"
    sampler: dict = field(default_factory=dict)  # name, n_startup_trials, seed scheme
    pruner: dict = field(default_factory=dict)
    space: dict = field(default_factory=dict)  # :func:`search_space`
    states: dict = field(default_factory=dict)  # COMPLETE / PRUNED / FAIL -> number of trials
    wall_seconds: float | None = None  # the tuning sessions of this study, all together (the study's account)
    cpu_seconds: float | None = None  # their CPU seconds (in-process trials: the training included)
    runs_train_seconds: float = 0.0  # the trials' training loops, from the run store (any executor)
    runs_cpu_seconds: float = 0.0

    @property
    def n_trials(self) -> int:
        return len(self.trials)

    def as_dict(self) -> dict:
        return {"loss": self.loss, "model": self.model, "study": self.study, "n_trials": self.n_trials,
                "states": self.states, "sampler": self.sampler, "pruner": self.pruner, "space": self.space,
                "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds,
                "runs_train_seconds": self.runs_train_seconds, "runs_cpu_seconds": self.runs_cpu_seconds,
                "trials": self.trials, "best": self.best}


def storage_path() -> Path:
    return cache_subdir("tune") / STORAGE_FILE


def is_tree(base: RunConfig) -> bool:
    return is_gbdt_model(base.model)


def search_space(loss: str, model: str = "mlp") -> dict:
    """The space a loss (or a tree ranker) is tuned over (what :func:`study_name` names and the report prints)."""
    if is_gbdt_model(model):
        return {**{f"model_params.{k}": d.as_dict() for k, d in GBDT_PARAMETERS.items()},
                "fixed": {**{f"model_params.{k}": v for k, v in GBDT_FIXED.items()},
                          "most_trees": GBDT_ROUNDS, "early_stopping_rounds": GBDT_PATIENCE}}
    space = {"lr": LR.as_dict(), "batch_size": BATCH_SIZE.as_dict()["choices"]}
    from ltr.losses import LEARNABLE_LOSSES

    if loss in LEARNABLE_LOSSES:
        space["loss_lr"] = LOSS_LR.as_dict()
    for name, dim in LOSS_PARAMETERS.get(loss, {}).items():
        space[f"loss_params.{name}"] = dim.as_dict()
    return space


def sampler_settings(n_startup_trials: int = N_STARTUP_TRIALS) -> dict:
    return {"name": "TPESampler", "n_startup_trials": int(n_startup_trials),
            "seed": "per trial: sha256 of (study name, trial number); the name covers loss, fold and sampler seed"}


def pruner_settings(base: RunConfig) -> dict:
    return {"name": "MedianPruner", **(GBDT_PRUNER if is_tree(base) else PRUNER)}


def tree_base(base: RunConfig) -> RunConfig:
    """A tree ranker's run as its study trains it: up to GBDT_ROUNDS trees, early stopping after GBDT_PATIENCE."""
    return replace(base, epochs=GBDT_ROUNDS, patience=GBDT_PATIENCE, model_params={**base.model_params, **GBDT_FIXED})


def study_name(base: RunConfig, *, sampler_seed: int, n_startup_trials: int = N_STARTUP_TRIALS) -> str:
    """``<data>-f<fold>-<loss>-<model>-<digest>``: the digest covers the fixed result-defining fields (all but
    the tuned ones), the search space, the sampler (its seed and random start-up) and the pruner, so another
    setting is another study."""
    fixed = {k: v for k, v in base.result_config().items() if k not in ("lr", "batch_size", "loss_lr")}
    digest = content_digest({"fixed": fixed, "space": search_space(base.loss, base.model),
                             "sampler_seed": sampler_seed, "sampler": sampler_settings(n_startup_trials),
                             "pruner": pruner_settings(base), "objective": f"max best validation {SELECTION}"}, 12)
    return base.run_id.rsplit("-", 1)[0] + f"-{digest}"


def trial_config(base: RunConfig, trial, study: str) -> RunConfig:
    """The run of one trial: ``base`` with the trial's suggestions (a resumed trial gets its stored ones)."""
    if is_tree(base):
        params = {name: dim.suggest(trial, f"model_params.{name}") for name, dim in GBDT_PARAMETERS.items()}
        return replace(base, model_params={**base.model_params, **params}, experiment=f"tune:{study}")
    lr = LR.suggest(trial, "lr")
    batch_size = BATCH_SIZE.suggest(trial, "batch_size")
    from ltr.losses import LEARNABLE_LOSSES

    loss_lr = LOSS_LR.suggest(trial, "loss_lr") if base.loss in LEARNABLE_LOSSES else base.loss_lr
    loss_params = dict(base.loss_params)
    for name, dim in LOSS_PARAMETERS.get(base.loss, {}).items():
        loss_params[name] = dim.suggest(trial, f"loss_params.{name}")
    return replace(base, lr=lr, batch_size=int(batch_size), loss_lr=loss_lr, loss_params=loss_params,
                   experiment=f"tune:{study}")


def report_every(config: RunConfig) -> int:
    """Every how many epochs (boosting rounds) a trial reports to its study: each epoch of a neural run, each
    :data:`GBDT_REPORT_EVERY`-th round of a tree ranker's (a report and a pruning check cost about 50 ms of
    SQLite writes, as much as a round of LightGBM on MQ2008)."""
    return GBDT_REPORT_EVERY if is_tree(config) else 1


class TrialReportingStore:
    """The run store as a trial's run sees it: after the trainer stores an epoch, its validation NDCG@10 is
    reported to the trial (one report per epoch, or per ``every`` epochs: no per-step cost) and, if the pruner
    says so, the run's cancel event is set, so the run stops at its next step (stored ``cancelled``). Every
    other call is the store's own."""

    def __init__(self, store: RunStore, trial, cancel: threading.Event, every: int = 1):
        self._store, self._trial, self._cancel, self._every = store, trial, cancel, every
        self.pruned_at: int | None = None

    def __getattr__(self, name):
        return getattr(self._store, name)

    def log_epoch(self, run_id: str, epoch: int, metrics) -> None:
        self._store.log_epoch(run_id, epoch, metrics)
        if int(epoch) % self._every:
            return
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


def _open_study(name: str, *, pruner):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # Studies tuned in parallel processes share the file: wait for its write lock rather than fail. Opening it is
    # one process at a time: two opening a new file at once both stamped its schema version (IntegrityError on
    # alembic_version), which ended the MQ2008 reproduction's 2-worker tuning at its start.
    with open(storage_path().with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        storage = optuna.storages.RDBStorage(f"sqlite:///{storage_path()}",
                                             engine_kwargs={"connect_args": {"timeout": 120}})
        return optuna.create_study(study_name=name, storage=storage, direction="maximize", load_if_exists=True,
                                   pruner=pruner)


def trial_sampler(study: str, number: int, n_startup_trials: int = N_STARTUP_TRIALS):
    """TPE for trial ``number`` of ``study``, seeded by (study name, trial number): a new trial's suggestion
    depends on the study (its loss, fold, fixed settings and sampler seed) and its history only, so a resumed
    study asks what an uninterrupted one would, and no two studies share their random start-up points (a
    seed of the trial number alone gave every loss and fold the same ones: issue 41)."""
    import optuna

    return optuna.samplers.TPESampler(n_startup_trials=int(n_startup_trials),
                                      seed=int(content_digest([study, number], 8), 16))


class EpochWatcher(threading.Thread):
    """Reports a Ray trial's epochs as the store actor writes them (this process reads the same store every
    ``poll`` seconds) and, when the pruner says so, interrupts the main thread, where the Ray runner cancels
    the task as it does for Ctrl-C. It interrupts only while the Ray call is running (:meth:`ray_call_ended`
    closes that window under the same lock), so the interrupt always lands where :func:`_train_on_ray` catches it."""

    def __init__(self, store_path: Path, run_id: str, trial, poll: float = 0.25, every: int = 1):
        super().__init__(daemon=True, name=f"tune-watch-{run_id}")
        self.store_path, self.run_id, self.trial, self.poll, self.every = store_path, run_id, trial, poll, every
        self.stop, self.pruned_at = threading.Event(), None
        self._reported: set[int] = set()
        self._lock, self._in_ray_call = threading.Lock(), True

    def ray_call_ended(self) -> None:
        with self._lock:
            self._in_ray_call = False

    def report_new(self, store: RunStore) -> None:
        for epoch, value in _epochs(store, self.run_id, self.every):
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
        from ltr.store import RunStore

        with RunStore(self.store_path) as store:
            while not self.stop.wait(self.poll):
                self.report_new(store)


def tune_loss(base: RunConfig, trials: int = DEFAULT_TRIALS, *, store_path: str | Path | None = None,
              sampler_seed: int = 0, n_startup_trials: int = N_STARTUP_TRIALS, pruner=None,
              progress: Callable[[str], None] | None = None, ray_settings=None) -> LossTuning:
    """Run the study of ``base``'s loss up to ``trials`` trials in all (finished ones count; a trial a killed
    process left running is finished first, by its own number) and return every trial and the best.
    A tree ranker's study (``base.model`` lambdamart) tunes its LightGBM settings (:data:`GBDT_PARAMETERS`) with
    up to :data:`GBDT_ROUNDS` trees. ``ray_settings`` (:class:`core.ray_cluster.RaySettings`): each trial is a
    Ray task; else in this process. The study's wall and CPU seconds (every session's) are kept in the study."""
    import optuna
    from optuna.trial import TrialState

    from ltr.store import RunStore, default_store_path

    if is_tree(base):
        base = tree_base(base)
    say = progress or (lambda _msg: None)
    name = study_name(base, sampler_seed=sampler_seed, n_startup_trials=n_startup_trials)
    store_path = Path(store_path) if store_path else default_store_path()
    wall0, cpu0 = time.perf_counter(), _cpu_seconds()
    with _study_lock(name), RunStore(store_path) as store:
        study = _open_study(name, pruner=pruner if pruner is not None else optuna.pruners.MedianPruner(
            **{k: v for k, v in pruner_settings(base).items() if k != "name"}))
        try:
            for frozen in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                say(f"{name}: resuming trial {frozen.number} (left running by a process that ended)")
                study.sampler = trial_sampler(name, frozen.number, n_startup_trials)
                _run_trial(optuna.trial.Trial(study, frozen._trial_id), base, name, store, say, resumed=True,
                           ray_settings=ray_settings)
            while len(study.get_trials(deepcopy=False)) < trials:
                study.sampler = trial_sampler(name, len(study.get_trials(deepcopy=False)), n_startup_trials)
                _run_trial(study.ask(), base, name, store, say, resumed=False, ray_settings=ray_settings)
        finally:  # what this session spent, added to the study's own account (a killed one's is lost)
            attrs = study.user_attrs
            study.set_user_attr("wall_seconds", attrs.get("wall_seconds", 0.0) + time.perf_counter() - wall0)
            study.set_user_attr("cpu_seconds", attrs.get("cpu_seconds", 0.0) + _cpu_seconds() - cpu0)
            study.set_user_attr("sampler", sampler_settings(n_startup_trials))
            study.set_user_attr("pruner", pruner_settings(base) if pruner is None else {"name": type(pruner).__name__})
        return _summary(study, base, name, store)


def _cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its children that ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _tune_in_worker(job: dict) -> LossTuning:
    """One study in a worker process of :func:`tune_studies` (its progress on this process's stderr)."""
    import sys

    from core.threads import apply_torch_threads

    apply_torch_threads()
    quiet = job.pop("quiet")
    say = (lambda _msg: None) if quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    return tune_loss(job.pop("base"), job.pop("trials"), progress=say, **job)


def tune_studies(bases: Sequence[RunConfig], trials: int = DEFAULT_TRIALS, *, workers: int = 1,
                 quiet: bool = False, **options) -> list[LossTuning]:
    """:func:`tune_loss` of each of ``bases`` (one study each), ``workers`` studies at a time in processes of
    their own (1: in this process, one after the other); the results in the order of ``bases``. ``options``:
    :func:`tune_loss`'s keywords (``store_path``, ``sampler_seed``, ``n_startup_trials``, ``ray_settings``)."""
    if workers <= 1 or len(bases) <= 1:
        say = None if quiet else (lambda msg: print(msg, file=__import__("sys").stderr, flush=True))
        return [tune_loss(base, trials, progress=say, **options) for base in bases]
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    from core.threads import WORKERS_ENV

    os.environ[WORKERS_ENV] = str(workers)  # each worker takes its share of the cores (core.threads)
    jobs = [{"base": base, "trials": trials, "quiet": quiet, **options} for base in bases]
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_tune_in_worker, jobs))


@dataclass(frozen=True)
class _Trained:
    status: str  # completed | cancelled | failed | bad input
    message: str
    trained: bool
    pruned_at: int | None


def _train_here(config: RunConfig, trial, store: RunStore, say) -> _Trained:
    from ltr.train.inprocess import train_one

    cancel = threading.Event()
    reporting = TrialReportingStore(store, trial, cancel, report_every(config))
    outcome = train_one(config, reporting, cancel=cancel, progress=lambda msg: say(f"  trial {trial.number}: {msg}"))
    trained = outcome.status != "completed" or bool(outcome.result and outcome.result.retrained)
    return _Trained(outcome.status, outcome.message, trained, reporting.pruned_at)


def _train_on_ray(config: RunConfig, trial, store: RunStore, settings) -> _Trained:
    from ltr.ray_runner import run_one_ray

    done = store.find_run(config.run_id)
    if done is not None and done["status"] == "completed":
        return _Trained("completed", "already completed", False, None)
    watcher = EpochWatcher(Path(store.path), config.run_id, trial, every=report_every(config))
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
                for epoch, v in _epochs(store, config.run_id, report_every(config)):
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


def _epochs(store: RunStore, run_id: str, every: int = 1) -> list[tuple[int, float]]:
    """The run's stored (epoch, validation NDCG@10), every ``every``-th epoch (those a trial reports)."""
    series = store.epoch_series([run_id], [SELECTION])
    return [(int(e), float(v)) for e, v in zip(series["epoch"], series["value"]) if int(e) % every == 0]


def _summary(study, base: RunConfig, name: str, store: RunStore) -> LossTuning:
    """What ran, read from the study and the run store: every trial, the best, the sampler, pruner and cost."""
    from optuna.trial import TrialState

    from ltr.train import RunConfig

    trials = study.get_trials(deepcopy=False)
    rows = [{"number": t.number, "state": t.state.name, "value": t.value, "params": dict(t.params),
             "run_id": t.user_attrs.get("run_id")} for t in trials]
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    best = None
    if complete:
        top = max(complete, key=lambda t: (t.value, -t.number))
        run = store.find_run(top.user_attrs.get("run_id", ""))
        best = {"number": top.number, "value": top.value, "params": dict(top.params),
                "run_id": top.user_attrs.get("run_id"),
                "config": {k: v for k, v in (run or {}).get("config", {}).items() if k in RunConfig.RESULT_FIELDS}}
    runs = [store.find_run(r["run_id"]) for r in rows if r["run_id"]]
    attrs = study.user_attrs
    return LossTuning(base.loss, name, rows, best, model=base.model,
                      sampler=attrs.get("sampler", {}), pruner=attrs.get("pruner", {}),
                      space=search_space(base.loss, base.model),
                      states={s.name: sum(t.state == s for t in trials)
                              for s in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)},
                      wall_seconds=attrs.get("wall_seconds"), cpu_seconds=attrs.get("cpu_seconds"),
                      runs_train_seconds=sum(r.get("train_seconds") or 0.0 for r in runs if r),
                      runs_cpu_seconds=sum(r.get("cpu_seconds") or 0.0 for r in runs if r))


def tuned_grid(results: Sequence[LossTuning]) -> dict:
    """The tuned settings as a grid fragment: ``overrides.loss.<loss>`` (lr, batch_size, loss_lr) and
    ``loss_params.<loss>`` (the tuned loss parameters) for a neural loss; ``model_params.<tree ranker>`` (its
    tuned LightGBM settings) and ``overrides.model.<tree ranker>`` (most trees, early stopping) for a tree
    ranker; for :func:`apply_tuned`."""
    from ltr.losses import LEARNABLE_LOSSES

    overrides, loss_params, model_params = {"loss": {}}, {}, {}
    for result in results:
        if result.best is None:
            continue
        config = result.best["config"]
        if is_gbdt_model(result.model):
            model_params[result.model] = dict(config.get("model_params", {}))
            overrides.setdefault("model", {})[result.model] = {k: config[k] for k in ("epochs", "patience")}
            continue
        overrides["loss"][result.loss] = {k: config[k] for k in ("lr", "batch_size") if k in config}
        if result.loss in LEARNABLE_LOSSES and "loss_lr" in config:
            overrides["loss"][result.loss]["loss_lr"] = config["loss_lr"]
        tuned = {k.split(".", 1)[1]: v for k, v in result.best["params"].items() if k.startswith("loss_params.")}
        if tuned:
            loss_params[result.loss] = tuned
    out = {"overrides": overrides, "loss_params": loss_params}
    if model_params:
        out["model_params"] = model_params
    return out


def apply_tuned(spec: dict, tuned: dict) -> dict:
    """A grid mapping with the tuned settings (a :func:`tuned_grid` fragment, or the ``ltr tune --json``
    document holding one under ``grid``) merged in: tuned overrides win over ``[train]``, tuned loss and model
    parameters are added to the grid's own (``normalisation`` etc. kept)."""
    fragment = tuned.get("grid", tuned)
    out = dict(spec)
    overrides = {kind: {k: dict(v) for k, v in table.items()} for kind, table in (spec.get("overrides") or {}).items()}
    for kind, table in (fragment.get("overrides") or {}).items():
        for key, values in table.items():
            overrides.setdefault(kind, {}).setdefault(key, {}).update(values)
    out["overrides"] = overrides
    for section in ("loss_params", "model_params"):
        merged = {name: dict(values) for name, values in (spec.get(section) or {}).items()}
        for name, values in (fragment.get(section) or {}).items():
            merged.setdefault(name, {}).update(values)
        if merged or section in spec:
            out[section] = merged
    return out
