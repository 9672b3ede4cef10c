"""``CachedClient``: a backend behind the response cache, with a concurrency limit, a timeout per
call and retries with exponential backoff. This is the :class:`~pipeline.llm.base.ChatClient` that
analysis code receives (``pipeline.llm.make_client``).

- A cached answer is returned without calling the model (``LLMReply.cached``).
- Two workers never pay for the same call twice: the first claims it in the cache; the others wait
  for its answer (or take the claim over when its owner died).
- A failed attempt is recorded in the cache's ``failures`` table; after the last retry the call
  raises :class:`LLMError` (``chat``) or returns it in its slot (``chat_many``). Nothing is cached.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from pipeline.llm.base import GenerationOptions, LLMBackend, LLMError, LLMReply, Message, Provenance
from pipeline.llm.cache import ResponseCache, new_owner, request_key

POLL_S = 0.2  # how often a worker waiting for another worker's claim looks for the answer


class CachedClient:
    """See the module docstring. ``timeout`` bounds one attempt (seconds), ``retries`` is the number
    of extra attempts after a retryable failure, waiting ``backoff * 2**i`` seconds before retry i."""

    def __init__(self, backend: LLMBackend, cache: ResponseCache | None = None, *, concurrency: int = 1,
                 timeout: float = 120.0, retries: int = 2, backoff: float = 1.0):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.backend = backend
        self.cache = cache if cache is not None else ResponseCache()
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self._slots = threading.BoundedSemaphore(concurrency)  # limit on calls in flight (all threads)
        self.calls_made = 0  # attempts that reached the backend (for tests and progress reports)

    @property
    def provenance(self) -> Provenance:
        return self.backend.provenance

    def _lease_s(self) -> float:
        """How long a claim stays ours: every attempt timing out plus every backoff, plus slack."""
        return (self.timeout * (self.retries + 1)
                + sum(self.backoff * 2 ** i for i in range(self.retries)) + 30.0)

    # ---- one call --------------------------------------------------------------------------------
    def chat(self, messages: Sequence[Message], options: GenerationOptions | None = None) -> LLMReply:
        options = options or GenerationOptions()
        prov = self.provenance
        key = request_key(prov.backend, prov.model, messages, options)
        owner = new_owner()
        request = {"messages": list(messages), "options": options.as_dict()}
        while True:
            claim = self.cache.claim(key, backend=prov.backend, model=prov.model, request=request,
                                     owner=owner, lease_s=self._lease_s())
            if claim.state == "hit":
                return LLMReply(claim.text, prov, cached=True, seconds=0.0)
            if claim.state == "claimed":
                break
            time.sleep(POLL_S)  # another worker is paying for this call: wait for its answer
        try:
            text, seconds = self._call_with_retries(key, messages, options)
        except BaseException:
            self.cache.release(key, owner)
            raise
        self.cache.put(key, text, seconds=seconds, owner=owner)
        return LLMReply(text, prov, cached=False, seconds=seconds)

    def _call_with_retries(self, key: str, messages, options) -> tuple[str, float]:
        prov = self.provenance
        for attempt in range(self.retries + 1):
            try:
                return self._call_once(messages, options)
            except LLMError as exc:
                self.cache.record_failure(key, backend=prov.backend, model=prov.model, attempt=attempt,
                                          error=str(exc))
                if attempt == self.retries or not getattr(exc, "retryable", True):
                    raise
                time.sleep(self.backoff * 2 ** attempt)
        raise AssertionError("unreachable")

    def _call_once(self, messages, options) -> tuple[str, float]:
        """One attempt in its own daemon thread, so a backend that hangs is abandoned at ``timeout``
        (HTTP backends also get the timeout themselves and end their thread soon after)."""
        outcome: dict = {}

        def target():
            try:
                outcome["text"] = self.backend.complete(messages, options)
            except BaseException as exc:  # handed to the caller below
                outcome["error"] = exc

        prepare = getattr(self.backend, "prepare", None)
        if prepare is not None:
            prepare()  # one-time setup (loading weights) is not part of a call's timeout
        with self._slots:
            self.calls_made += 1
            start = time.perf_counter()
            thread = threading.Thread(target=target, daemon=True, name="llm-call")
            thread.start()
            thread.join(self.timeout)
            seconds = time.perf_counter() - start
        if thread.is_alive():
            raise LLMError(f"{self.provenance.backend}:{self.provenance.model}: no reply within "
                           f"{self.timeout:g} s")
        if "error" in outcome:
            exc = outcome["error"]
            if isinstance(exc, LLMError):
                raise exc
            raise LLMError(f"{self.provenance.backend}:{self.provenance.model}: "
                           f"{type(exc).__name__}: {exc}") from exc
        text = outcome.get("text")
        if not isinstance(text, str):
            raise LLMError(f"{self.provenance.backend}:{self.provenance.model}: reply is not text "
                           f"({type(text).__name__})")
        return text, seconds

    # ---- many calls ------------------------------------------------------------------------------
    def chat_many(self, requests: Sequence[Sequence[Message]], options: GenerationOptions | None = None,
                  progress: str | None = None) -> list[LLMReply | LLMError]:
        """Answer ``requests`` with up to ``concurrency`` calls in flight; identical requests are
        asked once. ``progress`` is a tqdm description (no bar when None)."""
        options = options or GenerationOptions()
        prov = self.provenance
        keys = [request_key(prov.backend, prov.model, m, options) for m in requests]
        unique: dict[str, Sequence[Message]] = {}
        for key, messages in zip(keys, requests):
            unique.setdefault(key, messages)
        results: dict[str, LLMReply | LLMError] = {}

        def one(item):
            key, messages = item
            try:
                results[key] = self.chat(messages, options)
            except LLMError as exc:
                results[key] = exc

        bar = None
        if progress is not None:
            from tqdm import tqdm
            bar = tqdm(total=len(unique), desc=progress, unit="call")
        try:
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                for _ in pool.map(one, unique.items()):
                    if bar is not None:
                        bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        return [results[key] for key in keys]
