"""Whether a stored run is being trained by a live process now: on this host its recorded process
(pid and start time), on another host its heartbeat."""
from __future__ import annotations

import socket
import time
from typing import Mapping

from core.processes import proc_start_time

# A running run whose heartbeat is older than this (and whose process is gone) is reaped as failed.
STALE_AFTER_SECONDS = 120.0


def _same_process_alive(pid: int | None, started: str | None) -> bool:
    """Whether ``pid`` exists and, when its start time was recorded, is still that same process
    (a pid reused by another process after the trainer died does not count)."""
    now_started = proc_start_time(pid)
    return now_started is not None and (not started or now_started == started)


def run_is_live(run: Mapping, *, stale_after: float = STALE_AFTER_SECONDS) -> bool:
    """Whether a stored run (a :meth:`RunStore.get_run` row) is being trained by a live process now.

    On this host the process decides: the recorded pid alive and the same process (start time) is
    live however late its heartbeat (a loaded machine delays heartbeats, it does not kill trainers),
    and a dead or reused pid is not live however recent the heartbeat. A run of another host can
    only be judged by its heartbeat (younger than ``stale_after`` seconds).
    """
    if run.get("status") != "running":
        return False
    if run.get("host") == socket.gethostname():
        return _same_process_alive(run.get("pid"), run.get("pid_started"))
    return run.get("heartbeat") is not None and time.time() - run["heartbeat"] <= stale_after
