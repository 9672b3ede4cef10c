"""Where things live: the project root, the runtime cache and the configured data folders.

Configuration comes from, in order of precedence:
1. environment variables (``IRDASH_CACHE_DIR``, ``IRDASH_DATA_<NAME>``, e.g. ``IRDASH_DATA_MQ2008``),
2. ``irdash.toml`` at the project root (git-ignored), e.g.::

       cache_dir = "/big/disk/irdash-cache"
       [data]
       mq2008 = "/data/MQ2008"          # a folder holding Fold1/ ... Fold5/
       web10k = "/data/MSLR-WEB10K"
       trec_dl = "/data/trec_dl"         # a folder in the layout of shared/data/trec_dl

3. defaults: ``<root>/cache``; no data folders (the synthetic presets need none).
"""
from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CONFIG_FILE_ENV = "IRDASH_CONFIG"


def _config_file() -> Path:
    return Path(os.environ.get(CONFIG_FILE_ENV, PROJECT_ROOT / "irdash.toml"))


@lru_cache(maxsize=None)
def _read_config(path: str, mtime: float) -> dict:
    with open(path, "rb") as fh:
        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: invalid TOML: {exc}") from exc


def load_config() -> dict:
    """The parsed ``irdash.toml`` (empty when there is none). Re-read when the file changes."""
    path = _config_file()
    if not path.is_file():
        return {}
    return _read_config(str(path), path.stat().st_mtime)


def cache_dir() -> Path:
    """The runtime cache folder (created on first use)."""
    value = os.environ.get("IRDASH_CACHE_DIR") or load_config().get("cache_dir")
    path = Path(value).expanduser() if value else PROJECT_ROOT / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_subdir(*parts: str) -> Path:
    """A folder below the cache, created on first use (e.g. ``cache_subdir("letor")``)."""
    path = cache_dir().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_folder(name: str) -> Path | None:
    """The configured folder of data set ``name`` (case-insensitive), or None when not configured."""
    value = os.environ.get(f"IRDASH_DATA_{name.upper().replace('-', '_')}")
    if not value:
        value = {k.lower(): v for k, v in load_config().get("data", {}).items()}.get(name.lower())
    return Path(value).expanduser() if value else None


def shared_data_dir() -> Path | None:
    """``../shared/data`` beside the checkout, when present (tests and benchmarks only)."""
    path = PROJECT_ROOT.parent / "shared" / "data"
    return path if path.is_dir() else None
