"""The optional flags every difficulty-aware job kind ends its command with (``prefer``, ``aware-judge``,
``aware-retrieve``): where the failure reasons come from, the query cap, the data folder and the progress
key, in the same order and under the same checks (``duplicates`` found the three kinds writing them out
alike). Lives in ``pipeline.prompting``, the lowest package all three kinds may import."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping


def optional_flags(*, reasons: str, sources: Mapping[str, str], max_queries: int | None,
                   folder: str | Path | None, progress_key: str | None) -> list[str]:
    """``[--reasons typology] [--max-queries N] [--data FOLDER] [--progress-key KEY]``; ``reasons`` must be one
    of the kind's ``sources`` (``assign``: the command's own model assigns them, the default, no flag;
    ``typology``: the typology store's runs), else a ValueError naming the choices."""
    if reasons not in sources:
        raise ValueError(f"reasons must be one of {', '.join(sources)}, got {reasons!r}")
    flags = ["--reasons", "typology"] if reasons == "typology" else []
    if max_queries:
        flags += ["--max-queries", str(int(max_queries))]
    if folder is not None:
        flags += ["--data", str(folder)]
    if progress_key:
        flags += ["--progress-key", progress_key]
    return flags
