"""Turning SIGTERM into an exception for the duration of a block (how a cancel reaches running code), and keeping an
in-process JVM's own signal handlers installed across what replaces them (Ray)."""
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


# The signals an in-process JVM (pyserini's, through jnius) handles itself: its compiled code uses SIGSEGV and
# SIGBUS for implicit null checks and safepoints, so its handlers must stay installed while it runs. Ray's core
# worker installs crash handlers on SIGSEGV, SIGILL, SIGFPE, SIGABRT (and SIGTERM) at ``ray.init`` and resets them
# to the default at ``ray.shutdown``: the JVM's next implicit SIGSEGV then killed the process (exit 139, no
# hs_err file), which is how the test session died at its first Lucene search after the Ray tests.
NATIVE_HANDLED = tuple(getattr(signal, name) for name in ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE") if hasattr(signal, name))
_SIGACTION_BYTES = 256  # larger than any libc's struct sigaction: the record is copied back as it was, unread
_native_handlers: dict[int, bytes] = {}


def _sigaction():
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    libc.sigaction.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    return ctypes, libc.sigaction


def keep_native_handlers(signals: tuple[int, ...] = NATIVE_HANDLED) -> None:
    """Record the handlers installed now for ``signals``, whatever installed them (a JVM's are C functions that
    ``signal.getsignal`` cannot see), for :func:`restore_native_handlers`. Linux and macOS; elsewhere nothing."""
    try:
        ctypes, sigaction = _sigaction()
    except (OSError, AttributeError):
        return
    for signum in signals:
        record = ctypes.create_string_buffer(_SIGACTION_BYTES)
        if sigaction(int(signum), None, record) == 0:
            _native_handlers[int(signum)] = record.raw


def restore_native_handlers() -> None:
    """Put back the handlers :func:`keep_native_handlers` recorded (nothing recorded: nothing to do); called after
    something that replaces or resets them (``ray.init`` / ``ray.shutdown``, :mod:`core.ray_cluster`)."""
    if not _native_handlers:
        return
    ctypes, sigaction = _sigaction()
    for signum, raw in _native_handlers.items():
        sigaction(signum, ctypes.create_string_buffer(raw, _SIGACTION_BYTES), None)
