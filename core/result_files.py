"""Stored results as JSON files, one folder per kind and dataset: ``cache/<kind>/<dataset>/<result id>.json``,
written atomically (a reader never sees half a file), listed newest first. What a result holds and how a
reader checks it is its study's (difficulty-aware generation, judging, retrieval); this module only files
them, so every kind is stored, listed and read back the same way."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from core import paths
from core.atomic import atomic_write_text


def results_dir(kind: str, dataset: str | None = None) -> Path:
    """``cache/<kind>[/<dataset>]``, created on first use."""
    return paths.cache_subdir(kind, *([dataset] if dataset else []))


def save_result(kind: str, result: Mapping, folder: Path | None = None) -> Path:
    """``result`` (with its ``dataset`` and ``id``) as ``<folder or cache/kind/dataset>/<id>.json``."""
    path = (folder or results_dir(kind, result["dataset"])) / f"{result['id']}.json"
    atomic_write_text(path, json.dumps(result, indent=1, ensure_ascii=False))
    return path


def read_result(path: str | Path, what: str) -> dict:
    """A stored result's JSON object; a file that is not JSON is a ``ValueError`` naming it, its line and
    ``what`` it should have been (the caller checks the kind and version)."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not {what}: {exc.msg} (column {exc.colno})") from None


def list_results(kind: str, dataset: str | None = None) -> list[Path]:
    """Stored result files of ``kind``, newest first (all datasets when ``dataset`` is None)."""
    root = paths.cache_dir() / kind
    pattern = f"{dataset}/*.json" if dataset else "*/*.json"
    return sorted(root.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True) if root.is_dir() else []
