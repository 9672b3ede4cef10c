"""Torch CPU threads for the failure study's model steps (embedded LLM, BERTScore encoder).

BERTScore's encoder runs on :func:`encoder_threads` (batched work: the load is not counted, see
:mod:`core.threads`). The model steps' count is :func:`core.threads.torch_choice`'s (the free cores, once per process;
``IRDASH_TORCH_THREADS`` overrides): on a shared CPU, torch's spinning OpenMP threads were 14x slower
than one thread for the embedded model (30 tokens: 113 s against 7.9 s at a load average of 12 on 2
cores), and a busy machine leaves these steps one thread. The setting applies only inside
:func:`torch_threads`; the count is recorded with the step's result (:func:`threads_record`).
"""
from __future__ import annotations

from core.threads import encoder_choice, torch_choice, using_torch_threads
from core.threads import using_torch_threads as torch_threads  # noqa: F401  (the steps' context manager)


def step_threads() -> int:
    return torch_choice().threads


def threads_record() -> dict:
    """The threads of this process's model steps and what they were chosen from (for provenance)."""
    return torch_choice().as_dict()


def encoder_threads():
    """Torch on the batched-encoding threads (BERTScore): :func:`core.threads.encoder_choice`, the
    worker's share of the cores whatever the load (measured faster than the load-aware count)."""
    return using_torch_threads(encoder_choice().threads)


def encoder_threads_record() -> dict:
    """The threads of this process's batched encoding and what they were chosen from (for provenance)."""
    return encoder_choice().as_dict()
