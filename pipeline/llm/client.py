"""``CachedClient``: a backend behind the response cache, with a concurrency limit, a timeout per
call and retries with exponential backoff. This is the :class:`~pipeline.llm.base.ChatClient` that
analysis code receives (``pipeline.llm.make_client``).

- A cached answer is returned without calling the model (``LLMReply.cached``).
- Two workers never pay for the same call twice: the first claims it in the cache; the others wait
  for its answer (or take the claim over when its owner died).
- Every reply goes through :func:`pipeline.llm.replies.answer_of`: reasoning is stripped, and an
  empty reply or one cut at ``max_tokens`` while reasoning is a failure, never an answer. The
  finish reason is stored with the answer and returned in :attr:`LLMReply.finish_reason`.
- A failed attempt is recorded in the cache's ``failures`` table; after the last retry the call
  raises :class:`LLMError` (``chat``) or returns it in its slot (``chat_many``). Nothing is cached.
- :class:`LLMUnavailable` (refused connection, no reply in time, unknown model) is never retried and
  is raised by ``chat_many`` too, at once, after which no further request starts: a dead server
  fails the step in one attempt, not one per query.
- The backend's ``resolve()`` runs once, before the first cache key is computed (the key holds the
  model's endpoint and digest): it checks that the model exists.
- ``timeout`` bounds the request itself: waiting for a free slot (``concurrency``) does not count.
  It bounds requests to servers only: an in-process engine (``backend.in_process``) is waited for
  (a timed-out call once failed a whole 1.5B step on a loaded 2-core machine).
"""
from __future__ import annotations

import threading
import time
from dataclasses import replace
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

from pipeline.llm.base import (ChatClient, Completion, GenerationOptions, LLMBackend, LLMError, LLMReply, LLMUnavailable,
                               Message, Provenance)
from pipeline.llm.cache import ResponseCache, new_owner, request_key
from pipeline.llm.replies import answer_of, as_completion

POLL_S = 0.2  # how often a worker waiting for another worker's claim looks for the answer


class CachedClient(ChatClient):
    """See the module docstring. ``timeout`` bounds one attempt (seconds), ``retries`` is the number
    of extra attempts after a retryable failure, waiting ``backoff * 2**i`` seconds before retry i."""

    def __init__(self, backend: LLMBackend, cache: ResponseCache | None = None, *, concurrency: int = 1,
                 timeout: float = 120.0, retries: int = 2, backoff: float = 1.0, batch_size: int = 8,
                 overrides: dict | None = None, step: str | None = None):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if not isinstance(backend, LLMBackend):  # its optional hooks are the base class's defaults
            raise TypeError(f"{type(backend).__name__} is no pipeline.llm.base.LLMBackend: subclass it")
        self.backend = backend
        self.step = step  # recorded with answers and failures ("generation", "judgments:binary", ...)
        self.cache = cache if cache is not None else ResponseCache()
        # decoding options the user set (CLI --temperature, --max-tokens, ...): they replace the step's
        # own values in every request of this client (and so in its cache keys)
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        unknown = set(self.overrides) - set(GenerationOptions.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown generation options {sorted(unknown)}")
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        # backends that batch (the embedded engines) answer up to this many requests per call
        self.batch_size = max(1, int(batch_size)) if backend.supports_batch else 1
        self._slots = threading.BoundedSemaphore(concurrency)  # limit on calls in flight (all threads)
        self.calls_made = 0  # attempts that reached the backend (for tests and progress reports)
        self._resolved = False
        self._resolve_lock = threading.Lock()

    @property
    def provenance(self) -> Provenance:
        """The backend's provenance, resolved first (endpoint, digest, model check: ``resolve()``);
        raises :class:`LLMUnavailable` when the model cannot be reached."""
        with self._resolve_lock:
            if not self._resolved:
                self.backend.resolve()
                self._resolved = True
        return self.backend.provenance

    def effective_options(self, options: GenerationOptions | None = None) -> GenerationOptions:
        """``options`` (the step's defaults) with this client's overrides applied: what is sent."""
        return replace(options or GenerationOptions(), **self.overrides)

    def _where(self) -> str:
        prov = self.backend.provenance
        return f"{prov.backend}:{prov.model}" + (f"@{prov.endpoint}" if prov.endpoint else "")

    def _accept(self, key: str, completion: Completion) -> Completion:
        """The answer in ``completion``, or the recorded :class:`LLMError` when there is none."""
        try:
            return answer_of(completion, self._where())
        except LLMError as exc:
            prov = self.backend.provenance
            self.cache.record_failure(key, backend=prov.backend, model=prov.model, attempt=0, error=str(exc),
                                      step=self.step)
            raise

    def _lease_s(self, scale: int = 1) -> float:
        """How long a claim stays ours: every attempt timing out plus every backoff, plus slack."""
        return (self.timeout * scale * (self.retries + 1)
                + sum(self.backoff * 2 ** i for i in range(self.retries)) + 30.0)

    # ---- one call --------------------------------------------------------------------------------
    def chat(self, messages: Sequence[Message], options: GenerationOptions | None = None) -> LLMReply:
        options = self.effective_options(options)
        prov = self.provenance
        key = request_key(prov, messages, options)
        owner = new_owner()
        request = {"messages": list(messages), "options": options.as_dict()}
        while True:
            claim = self.cache.claim(key, backend=prov.backend, model=prov.model, request=request,
                                     owner=owner, lease_s=self._lease_s(), step=self.step)
            if claim.state == "hit":
                return LLMReply(claim.text, prov, cached=True, seconds=0.0, finish_reason=claim.finish_reason)
            if claim.state == "claimed":
                break
            time.sleep(POLL_S)  # another worker is paying for this call: wait for its answer
        try:
            (raw,), seconds = self._call_with_retries([key], lambda: [self.backend.complete(messages, options)])
            answer = self._accept(key, raw)
        except BaseException:
            self.cache.release(key, owner)
            raise
        self.cache.put(key, answer.text, seconds=seconds, owner=owner, finish_reason=answer.finish_reason)
        return LLMReply(answer.text, prov, cached=False, seconds=seconds, finish_reason=answer.finish_reason)

    def _call_with_retries(self, keys: Sequence[str], call, scale: int = 1) -> tuple:
        """``call()`` with retries; every failed attempt is recorded under each of ``keys``."""
        prov = self.provenance
        for attempt in range(self.retries + 1):
            try:
                return self._call_once(call, scale)
            except LLMError as exc:
                for key in keys:
                    self.cache.record_failure(key, backend=prov.backend, model=prov.model, attempt=attempt,
                                              error=str(exc), step=self.step)
                if attempt == self.retries or not exc.retryable:
                    raise
                time.sleep(self.backoff * 2 ** attempt)
        raise AssertionError("unreachable")

    def _call_once(self, call, scale: int = 1) -> tuple[list[Completion], float]:
        """One attempt in its own daemon thread, so a backend that hangs is abandoned at ``timeout``
        (``scale`` times it for a batch of ``scale`` requests; HTTP backends also get the timeout
        themselves and end their thread soon after). The clock starts once a slot is free."""
        outcome: dict = {}

        def target():
            try:
                outcome["texts"] = call()
            except BaseException as exc:  # handed to the caller below
                outcome["error"] = exc

        self.backend.prepare()  # one-time setup (loading weights) is not part of a call's timeout
        with self._slots:
            self.calls_made += 1
            start = time.perf_counter()
            thread = threading.Thread(target=target, daemon=True, name="llm-call")
            thread.start()
            thread.join(None if self.backend.in_process else self.timeout * scale)
            seconds = time.perf_counter() - start
        prov = self.backend.provenance
        if thread.is_alive():
            raise LLMUnavailable(host=prov.endpoint or prov.backend, model=prov.model,
                                 cause=f"no reply within {self.timeout * scale:g} s",
                                 hint="raise --timeout, lower --concurrency, or check the server's load")
        if "error" in outcome:
            exc = outcome["error"]
            if isinstance(exc, LLMError):
                raise exc
            raise LLMError(f"{self._where()}: {type(exc).__name__}: {exc}") from exc
        try:
            return [as_completion(reply) for reply in outcome.get("texts")], seconds
        except LLMError as exc:
            raise LLMError(f"{self._where()}: {exc}") from None

    # ---- many calls ------------------------------------------------------------------------------
    def chat_many(self, requests: Sequence[Sequence[Message]], options: GenerationOptions | None = None,
                  progress: str | None = None, on_progress: Callable[[int], None] | None = None
                  ) -> list[LLMReply | LLMError]:
        """Answer ``requests`` with up to ``concurrency`` calls in flight; identical requests are
        asked once. ``progress`` is a tqdm description (no bar when None); ``on_progress(n)`` is told
        of every ``n`` requests answered (a job's progress record, :mod:`core.jobs.progress`)."""
        options = self.effective_options(options)
        prov = self.provenance
        keys = [request_key(prov, m, options) for m in requests]
        unique: dict[str, Sequence[Message]] = {}
        for key, messages in zip(keys, requests):
            unique.setdefault(key, messages)
        results: dict[str, LLMReply | LLMError] = {}
        bar = None
        if progress is not None:
            from tqdm import tqdm
            bar = tqdm(total=len(unique), desc=progress, unit="call")

        def advanced(n: int) -> None:
            if bar is not None:
                bar.update(n)
            if on_progress is not None:
                on_progress(n)
        try:
            if self.batch_size > 1:
                items = []
                for key, messages in unique.items():  # cached answers first, so batches hold misses only
                    hit = self.cache.lookup(key)
                    if hit is None:
                        items.append((key, messages))
                    else:
                        results[key] = LLMReply(hit.text, prov, cached=True, seconds=0.0,
                                                finish_reason=hit.finish_reason)
                advanced(len(results))
                # similar prompt lengths batch together: less left padding per generate call
                items.sort(key=lambda item: sum(len(m["content"]) for m in item[1]))
                for start in range(0, len(items), self.batch_size):
                    batch = items[start:start + self.batch_size]
                    results.update(self._answer_batch(batch, options))
                    advanced(len(batch))
            else:
                stop: list[LLMUnavailable] = []  # the first unavailability; no request starts after it

                def one(item):
                    key, messages = item
                    if stop:
                        return
                    try:
                        results[key] = self.chat(messages, options)
                    except LLMUnavailable as exc:
                        stop.append(exc)
                    except LLMError as exc:
                        results[key] = exc

                with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                    for _ in pool.map(one, unique.items()):
                        advanced(1)
                if stop:
                    raise stop[0]
        finally:
            if bar is not None:
                bar.close()
        return [results[key] for key in keys]

    def _answer_batch(self, batch, options: GenerationOptions) -> dict[str, LLMReply | LLMError]:
        """Cached answers for ``[(key, messages), ...]``; the requests this worker claims go to the
        backend in one ``complete_batch`` call; those another worker is making are waited for."""
        prov = self.provenance
        owner = new_owner()
        out: dict[str, LLMReply | LLMError] = {}
        claimed, busy = [], []
        for key, messages in batch:
            claim = self.cache.claim(key, backend=prov.backend, model=prov.model, owner=owner,
                                     request={"messages": list(messages), "options": options.as_dict()},
                                     lease_s=self._lease_s(len(batch)), step=self.step)
            if claim.state == "hit":
                out[key] = LLMReply(claim.text, prov, cached=True, seconds=0.0, finish_reason=claim.finish_reason)
            elif claim.state == "claimed":
                claimed.append((key, messages))
            else:
                busy.append((key, messages))
        if claimed:
            keys = [k for k, _ in claimed]
            try:
                raws, seconds = self._call_with_retries(
                    keys, lambda: self.backend.complete_batch([m for _, m in claimed], options), scale=len(claimed))
                if len(raws) != len(claimed):
                    raise LLMError(f"{self._where()}: {len(raws)} replies for {len(claimed)} requests")
            except LLMUnavailable:
                for key in keys:
                    self.cache.release(key, owner)
                raise
            except LLMError as exc:
                for key in keys:
                    self.cache.release(key, owner)
                    out[key] = exc
            except BaseException:
                for key in keys:
                    self.cache.release(key, owner)
                raise
            else:
                for key, raw in zip(keys, raws):
                    try:
                        answer = self._accept(key, raw)
                    except LLMError as exc:
                        self.cache.release(key, owner)
                        out[key] = exc
                        continue
                    self.cache.put(key, answer.text, seconds=seconds / len(keys), owner=owner,
                                   finish_reason=answer.finish_reason)
                    out[key] = LLMReply(answer.text, prov, cached=False, seconds=seconds / len(keys),
                                        finish_reason=answer.finish_reason)
        for key, messages in busy:
            try:
                out[key] = self.chat(messages, options)
            except LLMUnavailable:
                raise
            except LLMError as exc:
                out[key] = exc
        return out
