"""A stored result file (``core.result_files``: difficulty-aware generation, judging, retrieval) read once per
version of the file: every select-box label and every rerun reads the cached copy."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import streamlit as st


@st.cache_data(max_entries=48, show_spinner="Reading results…")
def _read(path: str, mtime: float, _load: Callable[[str], dict]) -> dict:
    # keyed by path and mtime (``_load`` is not hashed: a path holds one kind): a result stored again is read anew
    return _load(path)


def stored_result(load: Callable[[str], dict], path: Path) -> dict:
    """``load(path)`` (the view's reader, with its kind and version check), cached per file version."""
    return _read(str(path), path.stat().st_mtime, load)
