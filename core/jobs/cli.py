"""``python -m core.jobs``: run the worker in the foreground, list jobs, cancel one.

A :class:`core.cli.CommandLine`, so it keeps the convention of ``python -m ltr`` and ``python -m pipeline``:
flags checked by the shared types (a bad one exits 2 naming it), ``--json`` on the commands that print
results (``list``: ``{"jobs": [...]}``, ``cancel``: ``{"id", "status"}``), exit status 0 / 1 (another
worker holds the lock) / 2 (an unknown job id) / 130. :func:`core.jobs.lock.ensure_worker` starts
``python -m core.jobs worker`` with no flags.
"""
from __future__ import annotations

from dataclasses import asdict
from typing import Sequence

from core import cli
from core.jobs.queue import cancel, list_jobs
from core.jobs.records import JobError
from core.jobs.worker import WORKER_IDLE_EXIT_SECONDS, WORKER_POLL_SECONDS, run_worker


class WorkerRunning(RuntimeError):
    """Another worker holds the lock (a second one started by a race exits with this): exit status 1."""


def _worker_arguments(p) -> None:
    p.add_argument("--idle-exit", type=cli.nonnegative_float, default=WORKER_IDLE_EXIT_SECONDS,
                   help="seconds without queued or running jobs before the worker exits")
    p.add_argument("--poll", type=cli.positive_float, default=WORKER_POLL_SECONDS,
                   help="seconds between two looks at the queue")


def _worker(args) -> int:
    if run_worker(idle_exit=args.idle_exit, poll=args.poll) != 0:
        raise WorkerRunning("another job worker is running (one worker at a time runs the queue)")
    return 0


def _list_arguments(p) -> None:
    p.add_argument("--limit", type=cli.positive_int, default=50, help="at most this many jobs")
    cli.json_arg(p)


def _list(args) -> None:
    found = list_jobs(limit=args.limit)
    if args.json:
        cli.print_json({"jobs": [asdict(job) for job in found]})
        return
    for job in found:
        print(f"{job.id:>5}  {job.status:<9}  {job.resource:<7}  {job.label}")


def _cancel_arguments(p) -> None:
    p.add_argument("job_id", type=cli.positive_int, help="the job's id (see list)")
    cli.json_arg(p)


def _cancel(args) -> None:
    status = cancel(args.job_id)
    if args.json:
        cli.print_json({"id": args.job_id, "status": status})
    else:
        print(status)


COMMANDS = (
    cli.Command("worker", "run the job worker in the foreground", _worker_arguments, _worker),
    cli.Command("list", "print the jobs, newest first", _list_arguments, _list),
    cli.Command("cancel", "cancel a job", _cancel_arguments, _cancel),
)

COMMAND_LINE = cli.CommandLine("python -m core.jobs", __doc__.split("\n")[0], COMMANDS,
                               input_errors=lambda: (JobError,), failures=lambda: (WorkerRunning, OSError))


def build_parser():
    return COMMAND_LINE.build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND_LINE.main(argv)
