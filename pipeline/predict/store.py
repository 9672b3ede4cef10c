"""Stored predictions: every ``python -m pipeline predict`` result kept under its own id, never replaced,
so the Predicting failure page reads what the command computed (the page computes nothing itself).

Layout: ``cache/predict/<id>.json`` (atomic, written once the table is complete), the JSON form of
:meth:`pipeline.predict.compute.Prediction.as_dict` plus ``id`` and ``time``. The id is
``<UTC time>-<sha256 of datasets and settings>[:8]-<4 random hex>``: it sorts by time and says which
results share a configuration.
"""
from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

from core import paths
from core.atomic import atomic_write_text
from core.digest import content_digest

RESULT_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{8}-[0-9a-f]{4}$")


class PredictionStoreError(ValueError):
    """An unknown or malformed result id."""


def store_dir() -> Path:
    return paths.cache_subdir("predict")


def new_id(document: dict, now: float | None = None) -> str:
    digest = content_digest([document["datasets"], document["settings"]], 8, default=str)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{digest}-{uuid.uuid4().hex[:4]}"


def save(document: dict) -> tuple[str, Path]:
    """Store ``document`` (a prediction's JSON form) under a new id: ``(id, path)``."""
    result_id = new_id(document)
    stored = {"id": result_id, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **document}
    path = store_dir() / f"{result_id}.json"
    atomic_write_text(path, json.dumps(stored, ensure_ascii=False, indent=1, allow_nan=False))
    return result_id, path


def load(result_id: str) -> dict:
    if not RESULT_ID.match(result_id or ""):
        raise PredictionStoreError(f"not a prediction id: {result_id!r}")
    path = store_dir() / f"{result_id}.json"
    if not path.is_file():
        raise PredictionStoreError(f"no stored prediction {result_id} in {store_dir()}")
    return json.loads(path.read_text(encoding="utf-8"))


def list_results() -> list[dict]:
    """``[{"id", "time", "datasets", "settings", "partial"}]``, newest first (unreadable files skipped)."""
    out = []
    for path in sorted(store_dir().glob("*.json"), reverse=True):
        if not RESULT_ID.match(path.stem):
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        out.append({k: doc.get(k) for k in ("id", "time", "datasets", "settings", "partial")})
    return out
