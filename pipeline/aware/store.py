"""Stored results of the difficulty-aware studies: one JSON file per result under
``cache/<kind>/<dataset>/<result id>.json`` (``kind``: ``aware-judge``, ``aware-retrieve``), filed by
:mod:`core.result_files` as difficulty-aware generation's are, with the configuration, provenance and every
per-query record beside the summary, so a page or a later reader sees exactly what produced a number. A result's id is a digest of what defines it (never
its timings), so a rerun of the same configuration replaces its file rather than adding one."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from core import result_files

KINDS = ("aware-judge", "aware-retrieve")


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown result kind {kind!r}; one of {', '.join(KINDS)}")
    return kind


def results_dir(kind: str, dataset: str | None = None) -> Path:
    return result_files.results_dir(_kind(kind), dataset)


def save_result(kind: str, result: Mapping, folder: Path | None = None) -> Path:
    return result_files.save_result(_kind(kind), result, folder)


def load_result(kind: str, path: str | Path, version: int) -> dict:
    """A stored result of ``kind``; a file that is not one (bad JSON, another kind or version) is an
    error naming it."""
    result = result_files.read_result(path, f"an {kind} result")
    if not isinstance(result, dict) or result.get("kind") != _kind(kind) or result.get("version") != version:
        raise ValueError(f"{path}: not an {kind} result of version {version}")
    return result


def list_results(kind: str, dataset: str | None = None) -> list[Path]:
    """Stored result files of ``kind``, newest first (all datasets when ``dataset`` is None)."""
    return result_files.list_results(_kind(kind), dataset)
