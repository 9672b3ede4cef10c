"""What counts as an answer: reasoning removed, and empty or reasoning-truncated replies refused.

Every backend's reply goes through :func:`answer_of` in the client, so no backend can cache a
``<think>`` block, an empty string, or a reply that ran out of tokens while still reasoning.
"""
from __future__ import annotations

import re

from pipeline.llm.base import UNKNOWN_FINISH, Completion, LLMError

_CLOSED_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_OPEN_THINK = re.compile(r"<think>.*\Z", re.DOTALL)  # reasoning cut off before its closing tag


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>...</think>`` blocks, and without a trailing unclosed ``<think>`` block."""
    return _OPEN_THINK.sub("", _CLOSED_THINK.sub("", text)).strip()


def as_completion(reply) -> Completion:
    """A backend's return value (``Completion`` or ``str``) as a ``Completion``; LLMError otherwise."""
    if isinstance(reply, Completion):
        return reply
    if isinstance(reply, str):
        return Completion(reply)
    raise LLMError(f"reply is not text ({type(reply).__name__})")


def answer_of(reply, where: str) -> Completion:
    """The answer in a backend's reply, with its finish reason (:data:`UNKNOWN_FINISH` when the
    backend gave none), or :class:`LLMError` (not retryable: at a fixed seed and temperature the same
    request gives the same reply) when no answer is left after the reasoning."""
    completion = as_completion(reply)
    text = strip_reasoning(completion.text)
    if text:
        return Completion(text, completion.finish_reason or UNKNOWN_FINISH)
    had_reasoning = "<think>" in completion.text
    if completion.finish_reason == "length":
        what = "reasoning" if had_reasoning else "no text"
        raise LLMError(f"{where}: reply cut at max_tokens with {what} and no answer "
                       f"(finish_reason length; raise --max-tokens, or keep --no-think)", retryable=False)
    what = "only reasoning" if had_reasoning else "an empty reply"
    raise LLMError(f"{where}: {what}, no answer (finish_reason {completion.finish_reason or 'unknown'})",
                   retryable=False)
