"""Training runs: one ranker trained jointly with its loss on one fold, recorded in the run store.

A run is ``(data, fold, loss, model, hyper-parameters, seed)`` (:class:`RunConfig`); its id is a
hash of exactly the fields that define the result, so re-running a finished configuration is a
no-op and a grid can skip what is done. :func:`train_run` does, in order:

1. **Validate everything before writing anything**: names, data set and fold files (parsed through
   the cached reader), feature counts, loss/ranker parameters, and that a stored run with the same
   id has the same configuration. Bad input raises :class:`RunInputError` (one line); the store is
   untouched.
2. **Train** with Adam (ranker at ``lr``, learnable loss parameters at ``loss_lr``), the whole fold
   on the device as padded tensors (:class:`ltr.data.batching.ListBatcher`); the step does no
   per-query Python work and no host sync: logged values (training loss, LearnDCG's θ/b/α and the
   θ gradients) go into a preallocated on-device buffer flushed to the store at epoch end, when it
   is full, or every ``FLUSH_SECONDS`` (which also serves as the heartbeat).
3. **Per epoch**: validation NDCG@{1,3,5,10}, epoch wall time and mean training loss; model selection
   keeps the epoch with the best validation NDCG@10 (strictly better to replace); early stopping
   after ``patience`` epochs without improvement (0 = never stop early). Then an atomic checkpoint
   (``<store folder>/checkpoints/<run_id>.pt``: model, loss, optimizer, RNG states, counters, best
   state) so a run killed at any moment (SIGKILL included) resumes from the last finished epoch
   and ends with the same result as an uninterrupted one (the batch order is a function of the seed
   and the epoch, and every RNG state is restored).
4. **Test** the selected model on the fold's test split: NDCG@{1,3,5,10} mean and per query.

A crash marks the run ``failed`` with its error, SIGTERM/Ctrl-C mark it ``cancelled``; a SIGKILLed
run is left ``running`` with a stale heartbeat until :meth:`RunStore.reap_stale_runs` or a resume.

Names recorded in the store (what the dashboard reads):

- step metrics (every ``log_every`` steps): ``loss``; for learnable losses the keys of
  ``loss.tracked_parameters()`` (LearnDCG: ``theta_g, theta_d, theta_alpha, b_g, b_d, alpha``) and
  ``grad_<name>`` for each key of ``loss.theta_gradients()``;
- epoch metrics: validation ``ndcg@1, ndcg@3, ndcg@5, ndcg@10``, ``seconds`` (epoch wall time,
  training + validation), ``train_seconds`` and ``cpu_seconds`` (wall and process CPU time of the
  epoch's training loop alone), ``train_loss`` (mean over the epoch's batches); for learnable losses the
  keys of ``loss.tracked_parameters()`` at the epoch's end (the best epoch's are the tested model's);
- per query (test): ``ndcg@1, ndcg@3, ndcg@5, ndcg@10``; on the run: ``train_seconds`` = wall time of
  the training loops alone (no validation, checkpoints, data loading or start-up; summed over all
  sessions of a resumed run), ``cpu_seconds`` their CPU time, ``load_at_start`` the 1-minute load
  average when the run started, ``pretrain_seconds`` = NeuralLoss's surrogate pre-training.

The stored config is the result-defining fields plus a ``data_signature`` (feature and query/document
counts of the three splits): a run id whose stored config differs (e.g. the data folder changed
under it) is refused rather than silently mixed.

Layout (one concern per module; this package re-exports the public names):

- :mod:`ltr.train.config`: :class:`RunConfig` (fields, id, CLI form), :func:`resolve_device`, :class:`RunInputError`;
- :mod:`ltr.train.prepare`: :func:`prepare_run` (validation, data, ranker and loss; no writes);
- :mod:`ltr.train.steplog`: :class:`StepLog`, the on-device buffer of per-step values;
- :mod:`ltr.train.loop`: optimiser, one training epoch, evaluation;
- :mod:`ltr.train.checkpoint`: checkpoint path, atomic save, safe load, RNG state;
- :mod:`ltr.train.run`: :func:`train_run` (store bookkeeping, signals, the epoch loop);
- :mod:`ltr.train.summary`: :func:`run_summary` (a stored run as the ``--out`` JSON), :func:`loss_parameters_at_test`
  (a learned loss parameter at the tested checkpoint and at the last step);
- :mod:`ltr.train.inprocess`: many runs in one process (fold cache, each run isolated);
- :mod:`ltr.train.host`: the trainer host process (``python -m ltr worker``) the grid and the job runner use.
"""
from ltr.train.checkpoint import CHECKPOINT_FORMAT, checkpoint_path, load_checkpoint, save_checkpoint
from ltr.train.config import RunCancelled, RunConfig, RunInputError, resolve_device
from ltr.train.loop import EVAL_BATCH_SIZE, FLUSH_SECONDS, build_optimizer, evaluate, make_batcher, train_epoch
from ltr.train.prepare import PreparedRun, prepare_run
from ltr.train.run import SELECTION_METRIC, RunResult, train_run
from ltr.train.steplog import STEP_BUFFER_ROWS, StepLog
from ltr.train.summary import loss_parameters_at_test, run_summary

__all__ = ["CHECKPOINT_FORMAT", "EVAL_BATCH_SIZE", "FLUSH_SECONDS", "PreparedRun", "RunCancelled", "RunConfig",
           "RunInputError", "RunResult", "SELECTION_METRIC", "STEP_BUFFER_ROWS", "StepLog",
           "build_optimizer", "checkpoint_path", "evaluate", "load_checkpoint", "make_batcher", "prepare_run",
           "loss_parameters_at_test", "resolve_device", "run_summary", "save_checkpoint", "train_epoch", "train_run"]
