"""JSON-lines files of records (answers, samples of answers): :func:`records` reads each non-blank line as
a JSON object with the keys a format requires, and every problem is the format's error naming file and line
(``error(path, line_no, message)``, a ``ValueError``: bad input)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterator, Sequence


def records(path: str | Path, keys: Sequence[str],
            error: Callable[[Path, int, str], ValueError]) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of each non-blank line of ``path``; an absent file, a line that is not JSON
    and an object without every one of ``keys`` raise ``error``."""
    path = Path(path)
    if not path.is_file():
        raise error(path, 0, "file does not exist")
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:  # the whole message: what, and where in the line
                raise error(path, line_no, f"not JSON: {exc.msg} (column {exc.colno})") from None
            if not isinstance(record, dict) or not set(keys) <= set(record):
                named = [f'"{k}"' for k in keys]
                raise error(path, line_no, "expected an object with " + " and ".join([", ".join(named[:-1]), named[-1]]
                                                                                    if len(named) > 1 else named))
            yield line_no, record
