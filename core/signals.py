"""Turning SIGTERM into an exception for the duration of a block (how a cancel reaches running code)."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Callable, Iterator


@contextmanager
def sigterm_raises(make_error: Callable[[int], BaseException], *, chain_previous: bool = False) -> Iterator[None]:
    """Within the block, SIGTERM raises ``make_error(signum)``; the previous handler is restored after.

    ``chain_previous`` first calls the handler that was installed before (a trainer host's own, which
    ends the host after the current run). Signal handlers live in the main thread only, so elsewhere
    this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if chain_previous and callable(previous):
            previous(signum, frame)
        raise make_error(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
