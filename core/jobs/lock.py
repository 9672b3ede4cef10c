"""One worker at a time: the ``fcntl`` lock on ``cache/jobs/worker.lock`` and starting the detached worker."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

from core.paths import PROJECT_ROOT, cache_dir, cache_subdir


def _lock_path() -> Path:
    return cache_subdir("jobs") / "worker.lock"


def try_lock():
    """The worker lock's open file when this process got it (closing it releases it), else None."""
    fh = open(_lock_path(), "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    return fh


def worker_lock_held() -> bool:
    """Whether a live worker holds the lock (the kernel releases it when the worker dies)."""
    fh = try_lock()
    if fh is None:
        return True
    fh.close()  # closing releases the probe lock
    return False


def ensure_worker() -> int | None:
    """Start the detached worker unless one is alive; returns the new worker's pid (None if one ran).

    The worker is started through a shell that puts it in the background and exits at once; the
    shell is waited for here, so the worker's parent becomes init: when the worker exits it leaves
    no ``<defunct>`` child under the caller (the Streamlit server never waits for it).
    Two callers racing here may both spawn a worker; the loser fails to take the lock and exits.
    """
    if worker_lock_held():
        return None
    env = dict(os.environ, IRDASH_CACHE_DIR=str(cache_dir()), PYTHONUNBUFFERED="1")
    log = cache_subdir("jobs") / "worker.log"
    launcher = '"$@" >> "$IRDASH_WORKER_LOG" 2>&1 < /dev/null & echo $!'
    proc = subprocess.run(["/bin/sh", "-c", launcher, "sh", sys.executable, "-m", "core.jobs", "worker"],
                          cwd=PROJECT_ROOT, env=dict(env, IRDASH_WORKER_LOG=str(log)), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, start_new_session=True, timeout=30)
    out = proc.stdout.strip()
    return int(out) if out.isdigit() else None
