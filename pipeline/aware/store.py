"""Stored results of the difficulty-aware studies: one JSON file per result under
``cache/<kind>/<dataset>/<result id>.json`` (``kind``: ``aware-judge``, ``aware-retrieve``), written
atomically, with the configuration, provenance and every per-query record beside the summary, so a page or
a later reader sees exactly what produced a number. A result's id is a digest of what defines it (never
its timings), so a rerun of the same configuration replaces its file rather than adding one."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from core import paths
from core.atomic import atomic_write_text

KINDS = ("aware-judge", "aware-retrieve")


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown result kind {kind!r}; one of {', '.join(KINDS)}")
    return kind


def results_dir(kind: str, dataset: str | None = None) -> Path:
    return paths.cache_subdir(_kind(kind), *([dataset] if dataset else []))


def save_result(kind: str, result: Mapping, folder: Path | None = None) -> Path:
    path = (folder or results_dir(kind, result["dataset"])) / f"{result['id']}.json"
    atomic_write_text(path, json.dumps(result, indent=1, ensure_ascii=False))
    return path


def load_result(kind: str, path: str | Path, version: int) -> dict:
    """A stored result of ``kind``; a file that is not one (bad JSON, another kind or version) is an
    error naming it."""
    path = Path(path)
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not an {kind} result: {exc.msg} (column {exc.colno})") from None
    if not isinstance(result, dict) or result.get("kind") != _kind(kind) or result.get("version") != version:
        raise ValueError(f"{path}: not an {kind} result of version {version}")
    return result


def list_results(kind: str, dataset: str | None = None) -> list[Path]:
    """Stored result files of ``kind``, newest first (all datasets when ``dataset`` is None)."""
    root = paths.cache_dir() / _kind(kind)
    pattern = f"{dataset}/*.json" if dataset else "*/*.json"
    return sorted(root.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True) if root.is_dir() else []
