"""Several answers per query from one generator: the data folder's ``answers/samples.NAME.<dataset>.jsonl``
files (found by :func:`pipeline.data.imported.folder_files`, kind ``samples``; JSON lines ``{"qid", "sample",
"text"}``; e.g. the 8 text-davinci-003 samples of the HyDE paper's DL19 run), read as ``{sample: {qid: text}}`` for the variance of an answer-based measure across samples
of one model (``pipeline.study.sampling``).

Errors name the file and line (:class:`SamplesFormatError`, a ``ValueError``: bad input). A (qid, sample)
given twice, a qid outside the dataset's topics and a file without a line are errors; a sample that
misses some queries is not (each sample is scored over the queries it answers, and the count is shown).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from pipeline.data.jsonl import records

class SamplesFormatError(ValueError):
    """A malformed samples file; the message names file, line and problem."""

    def __init__(self, path, line_no: int, message: str):
        super().__init__(f"{path}:{line_no}: {message}")


def read_samples_jsonl(path: str | Path, known_qids: Mapping | None = None) -> dict[int, dict[str, str]]:
    """``{sample: {qid: text}}`` (samples in ascending order) from a samples file (module docstring)."""
    path = Path(path)
    samples: dict[int, dict[str, str]] = {}
    for line_no, record in records(path, ("qid", "sample", "text"), SamplesFormatError):
        qid, sample, text = str(record["qid"]), record["sample"], record["text"]
        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
            raise SamplesFormatError(path, line_no, f'"sample" must be a whole number >= 0, got {sample!r}')
        if not isinstance(text, str):
            raise SamplesFormatError(path, line_no, f'"text" must be a string, got {type(text).__name__}')
        if known_qids is not None and qid not in known_qids:
            raise SamplesFormatError(path, line_no, f"query {qid} is not a topic of this dataset")
        answers = samples.setdefault(sample, {})
        if qid in answers:
            raise SamplesFormatError(path, line_no, f"query {qid} appears twice in sample {sample}")
        answers[qid] = text
    if not samples:
        raise SamplesFormatError(path, 0, "no samples in file")
    return dict(sorted(samples.items()))
