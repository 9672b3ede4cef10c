"""``python -m core.jobs``: run the worker in the foreground, list jobs, cancel one."""
from __future__ import annotations

import argparse
from typing import Sequence

from core.jobs.queue import cancel, list_jobs
from core.jobs.worker import WORKER_IDLE_EXIT_SECONDS, WORKER_POLL_SECONDS, run_worker


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.jobs", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker", help="run the job worker in the foreground")
    w.add_argument("--idle-exit", type=float, default=WORKER_IDLE_EXIT_SECONDS,
                   help="seconds without queued or running jobs before the worker exits")
    w.add_argument("--poll", type=float, default=WORKER_POLL_SECONDS)
    ls = sub.add_parser("list", help="print the jobs, newest first")
    ls.add_argument("--limit", type=int, default=50)
    c = sub.add_parser("cancel", help="cancel a job")
    c.add_argument("job_id", type=int)
    args = parser.parse_args(argv)
    if args.cmd == "worker":
        return run_worker(idle_exit=args.idle_exit, poll=args.poll)
    if args.cmd == "list":
        for job in list_jobs(limit=args.limit):
            print(f"{job.id:>5}  {job.status:<9}  {job.resource:<7}  {job.label}")
        return 0
    print(cancel(args.job_id))
    return 0
