"""What a TREC DL data folder holds beside the collection: outputs made elsewhere, found by their file names,
and the sizes of the models that made them.

Layout (``shared/data/trec_dl/``; NAME is the component's name, YY the dataset, e.g. ``dl19``):

- ``runs/run.NAME.dlYY.txt``: a retriever's TREC run;
- ``judgments/judgments.NAME.dlYY.txt``: an LLM judge's labels, qrels format;
- ``answers/answers.NAME.dlYY.jsonl``: a generator's answers, ``{"qid", "text"}`` lines;
- ``answers/samples.NAME.dlYY.jsonl``: several samples of one generator, ``{"qid", "sample", "text"}`` lines;
- ``models.tsv``: ``name<TAB>parameters<TAB>source``, the size of each model whose outputs are here and where
  the figure comes from; ``unknown`` where nothing is published (:func:`folder_model_sizes`).

:func:`folder_files` is the one way a name is found for each kind (nothing is read); a study uses the runs,
judgments and answers it finds by default, as it names them (``--retriever NAME``, ``--judge NAME``,
``--generator NAME``). Sizes are kept as the file writes them (``"70B"``): :mod:`pipeline.study.imported_sizes`
reads them as billions, where the rest of the model-size rules live.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from core.errors import DatasetError

# kind -> (sub-folder, file-name prefix, suffix after ".<dataset>")
KINDS = {"runs": ("runs", "run.", ".txt"), "judgments": ("judgments", "judgments.", ".txt"),
         "answers": ("answers", "answers.", ".jsonl"), "samples": ("answers", "samples.", ".jsonl")}
MODELS_FILE = "models.tsv"
MODELS_COLUMNS = ("name", "parameters", "source")
UNKNOWN = "unknown"  # models.tsv's word for a size nothing publishes


def folder_files(folder: str | Path | None, kind: str, dataset: str) -> dict[str, Path]:
    """``{NAME: path}`` of the folder's files of ``kind`` (:data:`KINDS`) for ``dataset``, sorted by name;
    ``{}`` without a folder or without that sub-folder."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of imported file {kind!r}; known: {', '.join(KINDS)}")
    sub, prefix, suffix = KINDS[kind]
    where = Path(folder) / sub if folder is not None else None
    if where is None or not where.is_dir():
        return {}
    tail = f".{dataset}{suffix}"
    return {p.name[len(prefix):-len(tail)]: p for p in sorted(where.glob(f"{prefix}*{tail}"))
            if len(p.name) > len(prefix) + len(tail)}


def folder_judgments(folder: str | Path | None, dataset: str) -> dict[str, Path]:
    """``{judge: path}`` for a data folder's ``judgments/judgments.<judge>.<dataset>.txt`` files."""
    return folder_files(folder, "judgments", dataset)


def folder_answers(folder: str | Path | None, dataset: str) -> dict[str, Path]:
    """``{generator: path}`` for a data folder's ``answers/answers.<generator>.<dataset>.jsonl`` files."""
    return folder_files(folder, "answers", dataset)


@dataclass(frozen=True)
class ListedSize:
    """One row of ``models.tsv``: the model's ``parameters`` as written (``"70B"``, ``"0.78B"``, or
    :data:`UNKNOWN`), the ``source`` of that figure, and the file it was read from."""
    name: str
    parameters: str
    source: str
    file: str

    @property
    def known(self) -> bool:
        return self.parameters.strip().lower() != UNKNOWN

    def as_dict(self) -> dict:
        return {"parameters": self.parameters, "source": self.source, "file": self.file}


def read_models_tsv(path: str | Path) -> dict[str, ListedSize]:
    """``{name: ListedSize}`` from a ``models.tsv`` (header ``name parameters source``); a missing column, an
    empty field or a model listed twice is a :class:`DatasetError` naming the file and line."""
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    if not rows or tuple(c.strip().lower() for c in rows[0]) != MODELS_COLUMNS:
        raise DatasetError(f"{path}:1: expected the header {chr(9).join(MODELS_COLUMNS)!r} (tab-separated)")
    out: dict[str, ListedSize] = {}
    for line_no, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(MODELS_COLUMNS) or not all(cell.strip() for cell in row):
            raise DatasetError(f"{path}:{line_no}: expected three non-empty tab-separated fields "
                               f"(name, parameters, source), got {row!r}")
        name, parameters, source = (cell.strip() for cell in row)
        if name in out:
            raise DatasetError(f"{path}:{line_no}: model {name!r} is listed twice")
        out[name] = ListedSize(name, parameters, source, str(path))
    return out


def folder_model_sizes(folder: str | Path | None) -> dict[str, ListedSize]:
    """The data folder's ``models.tsv`` (:func:`read_models_tsv`); ``{}`` without a folder or without the file."""
    path = Path(folder) / MODELS_FILE if folder is not None else None
    return read_models_tsv(path) if path is not None and path.is_file() else {}
