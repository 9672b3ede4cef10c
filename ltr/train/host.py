"""The trainer host process (``python -m ltr worker``): trains run requests read on stdin, one at a time.

One JSON object per line::

    {"config": {RunConfig fields}, "store": "cache/runs.sqlite" | null, "force": false, "resume": true,
     "log": "<file the run's output is appended to>", "exit": "<file that receives the exit status>",
     "cancel": "<file whose appearance cancels the run>" | null}

Each request is trained by :func:`ltr.train.inprocess.train_one` in this process (torch imported
once, folds cached), with the process's stdout and stderr sent to ``log``; its exit status (0
completed, 1 failed, 2 bad input, 130 cancelled; those of ``python -m ltr train``) is then written
to ``exit`` atomically. That is the contract of :mod:`core.jobs`'s process jobs (an exit file beside
the log), so the job runner and the grid (:mod:`ltr.grid`) drive hosts the same way
(:class:`core.jobs.hosts.HostProcess`).

SIGTERM cancels the current run and ends the host; closing stdin (the driver went away) or
``idle_exit`` seconds without a request end it between runs.
"""
from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from core.atomic import atomic_write_text
from ltr.store import RunStore
from ltr.train.config import RunConfig, RunInputError, one_line
from ltr.train.inprocess import EXIT_BAD_INPUT, FOLDS, RunOutcome, train_one

CANCEL_POLL_SECONDS = 0.2
DEFAULT_IDLE_EXIT_SECONDS = 300.0


def host_command() -> list[str]:
    """The argv of a trainer host: ``python -m ltr worker`` with this interpreter."""
    return [sys.executable, "-m", "ltr", "worker"]


def _lines(fd: int, idle_exit: float) -> Iterator[bytes]:
    """Lines read from ``fd`` until EOF or ``idle_exit`` seconds without input (unbuffered, so
    ``select`` never misses a line sitting in a buffer)."""
    pending = b""
    while True:
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line
        ready, _, _ = select.select([fd], [], [], idle_exit)
        if not ready:
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        pending += chunk


@contextmanager
def _output_to(log: Path) -> Iterator[None]:
    """Send this process's stdout and stderr (file descriptors 1 and 2) to ``log`` (appended)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (fd, *saved):
            os.close(f)


def _watch(path: str | None, event: threading.Event, done: threading.Event) -> None:
    """Set ``event`` once ``path`` exists (checked every ``CANCEL_POLL_SECONDS`` until ``done``)."""
    if not path:
        return
    while not done.wait(CANCEL_POLL_SECONDS):
        if os.path.exists(path):
            event.set()
            return


def handle(request: dict) -> RunOutcome:
    """Train one request (see the module docstring) and write its exit file; returns the outcome."""
    log, exit_path = Path(request["log"]), Path(request["exit"])
    cancel, done = threading.Event(), threading.Event()
    watcher = threading.Thread(target=_watch, args=(request.get("cancel"), cancel, done), daemon=True)
    watcher.start()
    try:
        with _output_to(log):
            say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
            try:
                config = RunConfig.from_dict(request["config"])
            except (RunInputError, TypeError, ValueError) as exc:
                outcome = RunOutcome(str(request.get("config")), "bad input", EXIT_BAD_INPUT, one_line(exc))
            else:
                with RunStore(request.get("store")) as store:
                    outcome = train_one(config, store, resume=request.get("resume", True),
                                        force=request.get("force", False), cancel=cancel, progress=say)
            if outcome.result is not None:
                test = " ".join(f"{k}={v:.4f}" for k, v in outcome.result.summary["test"].items())
                print(f"{outcome.run_id} completed {test}", flush=True)
            else:
                say(f"{'error' if outcome.status != 'cancelled' else 'cancelled'}: run {outcome.run_id} "
                    f"{outcome.status}: {outcome.message}")
    finally:
        done.set()
    atomic_write_text(exit_path, f"{outcome.exit_code}\n")
    return outcome


def serve(fd: int = 0, *, idle_exit: float = DEFAULT_IDLE_EXIT_SECONDS) -> int:
    """The host loop: one request per line on ``fd`` until EOF, SIGTERM or ``idle_exit``; returns 0."""
    stop = threading.Event()

    def on_sigterm(signum, frame):  # between runs; during one, the trainer's handler chains to this
        stop.set()
        if not training.is_set():
            raise SystemExit(0)

    training = threading.Event()
    signal.signal(signal.SIGTERM, on_sigterm)
    started = time.monotonic()
    for line in _lines(fd, idle_exit):
        if not line.strip():
            continue
        request = json.loads(line)
        training.set()
        try:
            outcome = handle(request)
        finally:
            training.clear()
        print(f"[host {os.getpid()}] {outcome.run_id}: {outcome.status} (exit {outcome.exit_code}; "
              f"{FOLDS.loads} fold(s) read in {time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
        if stop.is_set():
            break
    return 0
