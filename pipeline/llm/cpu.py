"""Torch CPU threads for the failure study's model steps (embedded LLM, BERTScore encoder).

One thread by default (``IRDASH_TORCH_THREADS`` to change it): on a shared CPU, torch's spinning
OpenMP threads were 14x slower than one thread for the embedded model (30 tokens: 113 s against
7.9 s at a load average of 12 on 2 cores), and these small models gain little from more threads.
The setting applies only inside :func:`torch_threads`, so training elsewhere keeps torch's default.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

THREADS_ENV = "IRDASH_TORCH_THREADS"


def step_threads() -> int:
    return max(1, int(os.environ.get(THREADS_ENV, "1")))


@contextmanager
def torch_threads(n: int | None = None):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n or step_threads())
    try:
        yield
    finally:
        torch.set_num_threads(before)
