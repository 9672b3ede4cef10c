"""The LLM response cache: one SQLite store (``cache/llm/responses.sqlite``, WAL, ``core.db``).

A row of ``responses`` is keyed by the SHA-256 of (backend, model, endpoint, model digest,
messages, options), see :func:`request_key`: two servers, or a re-pulled tag, never share an answer.
It is in one of two states:

* ``pending``: a worker has *claimed* the call and is paying for it. Other workers (threads or
  processes) that want the same answer wait for it instead of calling the model again. A claim
  carries its owner (``host:pid:token``) and an expiry: a claim whose owner process is gone, or
  whose lease ran out, is taken over, so a killed run never blocks the next one.
* ``ok``: the answer, with its ``finish_reason`` (``stop``, ``length``, ...; a row stored before the
  column existed, or by a backend that does not say, reads ``unknown``). Rerunning a finished step
  reads it and makes no call.

A failed call (including an empty reply, or one cut off while reasoning: ``pipeline.llm.replies``)
is recorded in ``failures`` (one row per attempt, with the error) and its claim is released; it is
never stored as an answer, so the next run tries again.
"""
from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from core import db, paths
from core.digest import content_digest
from pipeline.llm.base import UNKNOWN_FINISH, GenerationOptions, Message, Provenance

_TABLES = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,          -- JSON: messages and options, for inspection
    status TEXT NOT NULL CHECK (status IN ('pending', 'ok')),
    response TEXT,
    seconds REAL,
    owner TEXT,
    claimed_at REAL,
    lease_until REAL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    error TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_key ON failures(key);
"""
# The cache's schema as its migrations (core.db.migrations): a change is a new migration at the end.
SCHEMA = db.Schema("llm-responses", (
    db.Migration.tables(1, "responses and failed attempts", _TABLES),
    db.Migration.columns(2, "responses", {"finish_reason": "TEXT"}),
    db.Migration.columns(3, "responses", {"step": "TEXT"}, "the study step that first asked: generation, ..."),
    db.Migration.columns(4, "failures", {"step": "TEXT"}),
))


def request_key(provenance: Provenance, messages: Sequence[Message], options: GenerationOptions) -> str:
    """Content key of one call: canonical JSON of everything that defines the answer (the model's
    identity, :meth:`Provenance.identity`, the messages and the decoding options)."""
    payload = {**provenance.identity(),
               "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
               "options": options.as_dict()}
    return content_digest(payload, ensure_ascii=False)


def new_owner() -> str:
    """A claim owner id: host and pid (so a dead owner is recognised) plus a unique token."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _owner_is_dead(owner: str | None) -> bool:
    """True when ``owner`` is a process on this host that no longer exists."""
    if not owner:
        return True
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another machine's claim: only its lease can expire it
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@dataclass(frozen=True)
class Claim:
    """The outcome of :meth:`ResponseCache.claim`: ``state`` is ``hit``, ``claimed`` or ``busy``."""
    state: str
    text: str | None = None
    seconds: float | None = None
    finish_reason: str | None = None


def _hit(row) -> Claim:
    """A stored answer as a ``hit``; NULL finish reasons (older rows) read :data:`UNKNOWN_FINISH`."""
    return Claim("hit", row["response"], row["seconds"], row["finish_reason"] or UNKNOWN_FINISH)


class ResponseCache:
    """SQLite response cache with in-flight claims (see the module docstring)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else paths.cache_subdir("llm") / "responses.sqlite"
        self._local = threading.local()  # one connection per thread (sqlite3 objects are not shared)
        db.migrate(self._conn(), SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = db.connect(self.path)
        return conn

    # ---- reads -------------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        hit = self.lookup(key)
        return None if hit is None else hit.text

    def lookup(self, key: str) -> Claim | None:
        """The stored answer of ``key`` as a ``hit`` (text, seconds, finish reason), or None."""
        row = self._conn().execute("SELECT response, seconds, finish_reason FROM responses "
                                   "WHERE key = ? AND status = 'ok'", (key,)).fetchone()
        return None if row is None else _hit(row)

    def stats(self) -> dict[str, int]:
        """Counts of stored answers, pending claims and recorded failed attempts."""
        conn = self._conn()
        counts = dict(conn.execute("SELECT status, COUNT(*) FROM responses GROUP BY status").fetchall())
        n_failures = conn.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
        return {"answers": counts.get("ok", 0), "pending": counts.get("pending", 0), "failures": n_failures}

    def failures(self, key: str | None = None, *, model: str | None = None, step: str | None = None,
                 limit: int | None = None) -> list[dict]:
        """Recorded failed attempts (all, or those of one request key, model or step), oldest first;
        ``limit``: the newest ``limit`` of them."""
        where, params = self._filters(key=key, model=model, step=step)
        sql = f"SELECT id, key, backend, model, step, attempt, error, at FROM failures{where} ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [dict(r) for r in reversed(self._conn().execute(sql, params).fetchall())]

    def answers_by_model(self) -> list[dict]:
        """Stored answers and failed attempts per (backend, model, step), for ``pipeline llm`` listings."""
        conn = self._conn()
        rows = conn.execute("SELECT backend, model, step, COUNT(*) AS answers FROM responses WHERE status = 'ok' "
                            "GROUP BY backend, model, step ORDER BY backend, model, step").fetchall()
        return [dict(r) for r in rows]

    def purge(self, *, model: str | None = None, step: str | None = None, backend: str | None = None) -> int:
        """Delete the stored answers of a model and/or step (at least one); returns how many. Their
        failure records stay (they are the history of what went wrong)."""
        if model is None and step is None:
            raise ValueError("purge needs a model or a step (refusing to empty the whole cache)")
        where, params = self._filters(model=model, step=step, backend=backend)
        with db.transaction(self._conn()) as conn:
            return conn.execute(f"DELETE FROM responses{where} AND status = 'ok'", params).rowcount

    @staticmethod
    def _filters(**columns) -> tuple[str, tuple]:
        given = {k: v for k, v in columns.items() if v is not None}
        if not given:
            return " WHERE 1 = 1", ()
        return " WHERE " + " AND ".join(f"{k} = ?" for k in given), tuple(given.values())

    # ---- claims ------------------------------------------------------------------------------
    def claim(self, key: str, *, backend: str, model: str, request: dict, owner: str,
              lease_s: float, step: str | None = None) -> Claim:
        """Return the stored answer (``hit``), take the call (``claimed``) or report that a live
        worker is making it (``busy``). Stale claims (dead owner, expired lease) are taken over."""
        now = time.time()
        with db.transaction(self._conn()) as conn:
            row = conn.execute("SELECT status, response, seconds, finish_reason, owner, lease_until "
                               "FROM responses WHERE key = ?", (key,)).fetchone()
            if row is not None and row["status"] == "ok":
                return _hit(row)
            if row is not None and row["owner"] != owner and row["lease_until"] > now \
                    and not _owner_is_dead(row["owner"]):
                return Claim("busy")
            conn.execute(
                "INSERT INTO responses (key, backend, model, request, status, owner, claimed_at, lease_until, "
                "created_at, step) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET owner = excluded.owner, claimed_at = excluded.claimed_at, "
                "lease_until = excluded.lease_until",
                (key, backend, model, json.dumps(request, ensure_ascii=False), owner, now, now + lease_s, now, step))
        return Claim("claimed")

    def put(self, key: str, text: str, *, seconds: float, owner: str, finish_reason: str | None = None) -> None:
        """Store the answer of a claimed call (whoever holds the claim now, the answer is the same)."""
        if not text.strip():  # the client refuses empty replies before this; never cache one
            raise ValueError(f"refusing to cache an empty answer for {key}")
        with db.transaction(self._conn()) as conn:
            conn.execute("UPDATE responses SET status = 'ok', response = ?, seconds = ?, finish_reason = ?, "
                         "owner = NULL, lease_until = NULL WHERE key = ?", (text, seconds, finish_reason, key))

    def release(self, key: str, owner: str) -> None:
        """Drop our pending claim (after a failure), so the next run calls again."""
        with db.transaction(self._conn()) as conn:
            conn.execute("DELETE FROM responses WHERE key = ? AND status = 'pending' AND owner = ?", (key, owner))

    def record_failure(self, key: str, *, backend: str, model: str, attempt: int, error: str,
                       step: str | None = None) -> None:
        with db.transaction(self._conn()) as conn:
            conn.execute("INSERT INTO failures (key, backend, model, attempt, error, at, step) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", (key, backend, model, attempt, error[:2000], time.time(), step))

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
