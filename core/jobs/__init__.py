"""The persistent background job queue: training never runs inside the Streamlit server.

A *job* is a command line (e.g. ``[sys.executable, "-m", "ltr", "train", ...]``) plus a resource
class (``cpu``, ``cuda:0``, ...), a label and a JSON ``meta`` (e.g. the run ids it will produce).
Jobs live in ``cache/jobs.sqlite``; their output goes to ``cache/jobs/<id>.log``.

Life cycle::

    submit() -> queued --worker--> running --process exits 0--> completed
                  |                   |------exits != 0 / dies--> failed (exit code + log tail)
                  +--cancel()--> cancelled <--cancel(): SIGTERM to the process group

Who does what:

- Pages call :func:`submit`, :func:`list_jobs`, :func:`cancel` and :func:`ensure_worker`; none of
  them waits for a job.
- One detached *worker* (``python -m core.jobs worker``, started by :func:`ensure_worker` in its own
  session so that it outlives the Streamlit server) loops: it reaps jobs whose process ended
  (exit code from the job's exit file, else "process died"), escalates cancelled jobs that ignore
  SIGTERM to SIGKILL, and starts queued jobs while each resource class is under its concurrency
  limit. It exits after ``idle_exit`` seconds without queued or running jobs. A single instance
  is guaranteed by an ``fcntl`` lock on ``cache/jobs/worker.lock`` (released by the kernel when the
  worker dies, so a crashed worker never blocks the next one).
- Jobs are started in a new session (``start_new_session=True``) so that neither a closed browser
  tab nor a restarted Streamlit server or worker stops them; a new worker finds running jobs
  again by their pid (checked against the process start time, so a reused pid is not mistaken
  for the job).

Concurrency limits per resource class: by default 1 (one job per GPU, one on the CPU). Override
with ``IRDASH_JOB_LIMITS="cpu=2,cuda:0=1"`` or in ``irdash.toml``::

    [jobs]
    limits = { cpu = 2, "cuda:0" = 1 }

Executors. The worker talks to processes only through the :class:`Executor` protocol
(``launch``, ``is_alive``, ``exit_code``, ``terminate``) and stores the opaque ``handle`` string
that ``launch`` returns. :class:`LocalProcessExecutor` runs ``/bin/sh -c '"$@"; echo $? > exit'``
around the command, so the exit code survives a worker restart.

Ray. Jobs of resource class ``ray`` are local driver processes (``python -m ltr train --executor
ray``) that run their work as Ray tasks (:mod:`ltr.ray_runner`); the queue, limits, logs and
cancel are those of any job (SIGTERM to the driver makes it ``ray.cancel`` its tasks). The queue
itself stays local on purpose: a Ray task dies with the process that submitted it, while a job
must outlive the dashboard and this worker. The class's default limit is
:func:`core.ray_cluster.default_job_limit`.

Jobs that name a ``host`` (the dashboard's training jobs) run in a long-lived host process instead
of a process of their own (:class:`LocalProcessExecutor`, :mod:`core.jobs.hosts`).

Layout (one concern per module; this package re-exports the public names):

- :mod:`core.jobs.records`: the jobs database, the :class:`Job` record and its log files;
- :mod:`core.jobs.queue`: what pages call (submit, list, cancel, worker info, limits);
- :mod:`core.jobs.kinds`: :class:`JobKind`, a kind of job (command, label, progress record, result link)
  declared and registered where it is defined, and the registry of kinds;
- :mod:`core.jobs.executors`: the :class:`Executor` protocol and :class:`LocalProcessExecutor`;
- :mod:`core.jobs.hosts`: :class:`HostProcess`, a long-lived child running many requests (hosted jobs, grids);
- :mod:`core.jobs.lock`: the single-worker lock and starting the detached worker;
- :mod:`core.jobs.worker`: the worker loop (reap, start queued jobs, idle exit);
- :mod:`core.jobs.cli`: ``python -m core.jobs worker|list|cancel`` (on the :mod:`core.cli` convention).
"""
from core.jobs.hosts import HostProcess
from core.jobs.executors import Executor, LocalProcessExecutor, make_executor, proc_start_time, visible_device
from core.jobs.kinds import JobKind, kind_named, kind_of, register, registered_kinds
from core.jobs.lock import ensure_worker
from core.jobs.queue import (cancel, default_limit, failure_message, get_job, keep_jobs_moving, list_jobs,
                             resource_jobs, resource_limits,
                             set_limit, submit, waiting_for, waiting_reasons, worker_info)
from core.jobs.records import (ACTIVE_STATUSES, DEFAULT_LIMIT, JOB_STATUSES, LIMITS_ENV, LOG_TAIL_CHARS, Job,
                               JobError, job_log_path, jobs_db_path, read_log_tail)
from core.jobs.worker import (KILL_GRACE_SECONDS, WORKER_IDLE_EXIT_SECONDS, WORKER_POLL_SECONDS, reap, run_worker,
                              start_queued)

__all__ = ["ACTIVE_STATUSES", "DEFAULT_LIMIT", "Executor", "HostProcess", "JOB_STATUSES", "Job", "JobError", "JobKind", "KILL_GRACE_SECONDS",
           "LIMITS_ENV", "LOG_TAIL_CHARS", "LocalProcessExecutor", "WORKER_IDLE_EXIT_SECONDS", "WORKER_POLL_SECONDS",
           "cancel", "default_limit", "ensure_worker", "failure_message", "get_job", "job_log_path", "jobs_db_path",
           "keep_jobs_moving", "kind_named", "kind_of", "list_jobs", "make_executor", "proc_start_time", "reap", "read_log_tail", "register", "registered_kinds",
           "resource_jobs", "resource_limits", "run_worker", "set_limit", "start_queued", "submit", "visible_device", "waiting_for", "waiting_reasons",
           "worker_info"]
