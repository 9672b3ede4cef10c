"""The run store: every LTR training run, its metric series and its per-query test results.

SQLite in WAL mode (``cache/runs.sqlite`` by default) so the dashboard reads while trainers write,
and several trainer processes can write at once (each write is one short ``BEGIN IMMEDIATE``
transaction). This package is the dashboard's contract: pages read through the ``list_runs``,
``step_series``, ``epoch_series``, ``per_query`` and ``counts`` methods and never write SQL.

Tables (long format, so new metrics need no migration):

- ``runs``: one row per run id (a hash of the result-defining config): config JSON, status
  (``pending | running | completed | failed | cancelled``), device, pid, host, timings, heartbeat,
  best epoch, test NDCG@{1,3,5,10} means, error text.
- ``step_metrics(run_id, name, step, epoch, value)``: training loss and loss-parameter trajectories.
- ``step_series(run_id, name, n, first_step, first_value, last_step, last_value, negative, zero,
  positive)``: one summary row per series, kept by the write path (:meth:`RunStore.log_steps_many`,
  :meth:`RunStore.truncate_after`), so the drift diagnostic reads a row per series instead of
  aggregating every step (28k steps x 6 series x 5 folds on every live refresh, before).
- ``epoch_metrics(run_id, name, epoch, value)``: validation NDCG@k, wall time per epoch.
- ``query_results(run_id, metric, qid, value)``: per-query test metrics (for paired t-tests).

Modules: ``runs`` (:class:`RunStore`, opening the file), ``schema`` (tables and migrations), ``writes``
and ``reads`` (the two halves of the store's methods), ``summaries`` (the ``step_series`` rows kept on
write), ``downsampling`` (series downsampled in SQL), ``live`` (the live-chart cache), ``liveness``
(is a run's trainer alive), ``identity`` (:func:`canonical_data`), ``errors``.
"""
from core.processes import proc_start_time
from ltr.store.errors import RunBusy, RunConfigMismatch, UnknownRun
from ltr.store.identity import canonical_data
from ltr.store.liveness import STALE_AFTER_SECONDS, run_is_live
from ltr.store.reads import latest_per_loss_and_fold, ndcg_per_query
from ltr.store.runs import RunStore, default_store_path
from ltr.store.schema import RUN_COLUMNS, SCHEMA, STATUSES

__all__ = ["RUN_COLUMNS", "RunBusy", "RunConfigMismatch", "RunStore", "SCHEMA", "STALE_AFTER_SECONDS", "STATUSES",
           "UnknownRun", "canonical_data", "default_store_path", "latest_per_loss_and_fold", "ndcg_per_query",
           "proc_start_time", "run_is_live"]
