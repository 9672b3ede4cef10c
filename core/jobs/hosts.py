"""Host processes: long-lived children that run many requests, one at a time, each reported by an exit file.

A host reads one JSON request per line on its stdin and, for each, appends the request's output to
its ``log`` and writes its exit status to its ``exit`` file (the same contract as a process job's
exit file), so starting a host's interpreter and libraries is paid once for many requests. A host
ends when its stdin closes, so a driver that dies takes its idle hosts with it. The job runner
(:class:`core.jobs.executors.LocalProcessExecutor`, for jobs that name a host) and the LTR grid
drive hosts through this class; ``python -m ltr worker`` is such a host.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from core.paths import PROJECT_ROOT


class HostProcess:
    """One host: ``argv`` started in its own session with a pipe on its stdin."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, log: str | Path | None = None,
                 cwd: str | Path = PROJECT_ROOT):
        self.argv = [str(a) for a in argv]
        out = open(log, "ab") if log is not None else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(self.argv, cwd=cwd, env=dict(env) if env is not None else None,
                                         stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        finally:
            if log is not None:
                out.close()
        self.exit_path: Path | None = None  # of the request it runs (or ran last)
        self.request: dict | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def idle(self) -> bool:
        """Alive and not running a request (its last request's exit file exists)."""
        return self.alive() and (self.exit_path is None or self.exit_path.exists())

    def send(self, request: Mapping, exit_path: str | Path) -> None:
        """Start ``request`` (its ``exit`` is ``exit_path``); the host must be idle."""
        exit_path = Path(exit_path)
        exit_path.unlink(missing_ok=True)
        self.request = {**request, "exit": str(exit_path)}
        self.exit_path = exit_path
        self.proc.stdin.write((json.dumps(self.request) + "\n").encode())
        self.proc.stdin.flush()

    def exit_code(self) -> int | None:
        """The current request's exit status once written (None while it runs or if the host died)."""
        try:
            return int(self.exit_path.read_text().strip()) if self.exit_path is not None else None
        except (FileNotFoundError, ValueError):
            return None

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the host's process group (SIGTERM: it cancels its request and ends)."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def close(self, *, wait: float | None = None) -> None:
        """Close stdin: the host ends after its current request (waits up to ``wait`` seconds)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        if wait is not None:
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.proc.wait()
