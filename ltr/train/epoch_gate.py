"""A test-only hook: hold a run at each epoch's start until a file that the test controls lets it go on.

A test that cancels a running run (through the UI, from another process) must know that the run is
still running when it clicks, however fast the machine trains. With ``IRDASH_TEST_EPOCH_GATE=<file>``
in the trainer's environment, epoch ``e`` starts only once ``<file>`` holds a number greater than
``e`` (how many epochs the test allows so far); while it waits the run stays cancellable and keeps
its heartbeat (``tick``). Unset, as everywhere outside tests, :func:`wait_at_epoch_gate` returns at once.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

EPOCH_GATE_ENV = "IRDASH_TEST_EPOCH_GATE"
POLL_SECONDS = 0.05


def epochs_allowed(gate: str | Path) -> int:
    """The number the gate file holds; 0 while it is missing or not (yet) a whole number."""
    try:
        return int(Path(gate).read_text().strip())
    except (FileNotFoundError, ValueError):
        return 0


def wait_at_epoch_gate(epoch: int, tick: Callable[[], None]) -> None:
    """Return once epoch ``epoch`` may start; ``tick`` (the trainer's cancel check) is called meanwhile."""
    gate = os.environ.get(EPOCH_GATE_ENV)
    if not gate:
        return
    while epochs_allowed(gate) <= epoch:
        tick()
        time.sleep(POLL_SECONDS)
