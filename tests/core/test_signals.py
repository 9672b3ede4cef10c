"""An in-process JVM's own signal handlers survive what resets them (core.signals): Ray's ray.shutdown resets
SIGSEGV & co. to the default, and the JVM's next implicit SIGSEGV then killed the test session (exit 139)."""
from __future__ import annotations

import ctypes
import signal
import sys

import pytest

from core import signals

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")


def caught(signum: int) -> bool:
    """Whether this process has a handler installed for ``signum`` (the kernel's view, not Python's table)."""
    mask = open("/proc/self/status").read().split("SigCgt:")[1].split()[0]
    return bool(int(mask, 16) >> (signum - 1) & 1)


def reset_behind_pythons_back(signum: int) -> None:
    """What ray.shutdown does to the JVM's handlers: sigaction(SIG_DFL) from C, unseen by the signal module."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.sigaction.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    default = ctypes.create_string_buffer(256)  # all zero: SIG_DFL, empty mask, no flags
    assert libc.sigaction(signum, default, None) == 0


def test_a_recorded_handler_is_put_back_after_it_was_reset(monkeypatch):
    monkeypatch.setattr(signals, "_native_handlers", {})
    signum = signal.SIGUSR2
    previous = signal.signal(signum, lambda *_: None)  # stands for the JVM's C handler
    try:
        signals.keep_native_handlers((signum,))
        reset_behind_pythons_back(signum)
        assert not caught(signum)
        signals.restore_native_handlers()
        assert caught(signum)
    finally:
        signal.signal(signum, previous)


def test_nothing_recorded_restores_nothing(monkeypatch):
    monkeypatch.setattr(signals, "_native_handlers", {})
    signum = signal.SIGUSR2
    previous = signal.signal(signum, lambda *_: None)
    try:
        reset_behind_pythons_back(signum)
        signals.restore_native_handlers()
        assert not caught(signum)
    finally:
        signal.signal(signum, previous)
