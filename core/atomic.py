"""Atomic writes for everything the project caches: a reader (or a process killed mid-write) never
sees half a file or half a folder.

- :func:`atomic_write` / :func:`atomic_write_text`: write a temp file beside the target, then
  ``os.replace`` it into place (the temp file is removed if writing fails).
- :func:`publish_dir`: build a folder under a temp name beside its final place, then rename it in
  one step. When a concurrent builder published the same entry first (its ``marker`` file exists),
  that entry is kept: content-keyed entries are identical by construction.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a temp path beside ``path``, then move it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


@contextmanager
def publish_dir(final: str | Path, *, marker: str = "meta.json") -> Iterator[Path]:
    """Yield an empty staging folder; on normal exit it becomes ``final`` in one rename.

    ``final/marker`` is how a complete entry is recognised: a rename that fails because another
    process already published a complete entry is not an error. The staging folder is always
    removed, so a failed or interrupted build leaves nothing that could pass for an entry.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".tmp-{final.name}-"))
    try:
        yield staging
        try:
            os.rename(staging, final)
        except OSError:
            if not (final / marker).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
