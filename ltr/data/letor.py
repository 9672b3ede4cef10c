"""Reader of the LETOR / SVMlight ranking format: ``label qid:Q i:v i:v ... # comment``.

The file is cut into line-aligned byte chunks (about 8 MiB each), parsed in parallel worker
processes when there are several. Each chunk takes one of two paths, with bit-identical results:

- dense fast path (:func:`_parse_dense`), for chunks where every line carries features ``1..F`` in
  order (the MSLR and MQ layout): the ``#`` comments are split off, ``:`` becomes a space, and
  pandas' C CSV parser reads the columns ``label, "qid", qid, 1, v1, 2, v2, ...``; the index columns
  are then checked to equal ``1..F`` in every row, vectorised. About 5x less CPU per line than the
  path below (bench/bench_data.py: ~40k against ~8k lines per CPU-second at 136 features).
- general path: scikit-learn's ``load_svmlight_file(query_id=True)``, for sparse files (Yahoo),
  varying feature counts, odd spacing or tokens, and for any chunk in which the fast path sees
  an anomaly (a parse error, a non-finite or negative value, a mismatched index column): the fast
  path never reports errors itself, so every error message comes from this path's checks below.
  Small chunks matter here: scikit-learn appends each qid with ``np.append`` (cost quadratic in the
  number of lines of one call) and runs at roughly 10k lines/s per core.

Both parse every number to float64 with a correctly rounded converter (Python's ``float``; pandas'
converter, which is correctly rounded from pandas 3.1 and asked to be with ``float_precision=
"round_trip"`` before) and then round once to float32, so the two paths agree bit for bit.

Rules (checked vectorised on the parsed arrays; the offending line is then found by re-reading the
chunk line by line with :func:`_line_problem`, so every error names the file and the line):

- every data line has ``qid:<integer>`` as its second token; feature indices are 1-based integers,
  strictly increasing within a line and at most ``n_features`` when that is given;
- labels are finite and >= 0 (-1 marks padding downstream); feature values are finite float32;
- the documents of a query are contiguous: a qid that reappears after another query is an error
  (a file that interleaves queries is ambiguous, and silently merging would reorder documents);
- blank lines and lines holding only a comment are skipped; queries whose labels are all 0 are kept;
- a ``docid = X`` in a line's comment (LETOR 4.0) is kept in ``doc_ids``.
"""
from __future__ import annotations

import csv
import io
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Bump when parsing semantics change: the binary cache (ltr.data.cache) is keyed on it.
# 2: dense fast path (same arrays as version 1, except that a label "-0" is now stored as +0).
PARSER_VERSION = 2
CHUNK_BYTES = 8 << 20
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_DOCID = re.compile(rb"docid\s*=\s*(\S+)")


def _pandas_float_options() -> dict:
    """Before pandas 3.1 the default float converter is not always correctly rounded; "round_trip" is."""
    import pandas as pd

    major, minor = (int(p) for p in pd.__version__.split(".")[:2])
    return {} if (major, minor) >= (3, 1) else {"float_precision": "round_trip"}


class LetorFormatError(ValueError):
    """A malformed LETOR file: ``str(err)`` is ``"<path>:<line>: <problem>"`` (1-based line)."""

    def __init__(self, path: str | Path, line_no: int | None, message: str):
        self.path, self.line_no, self.problem = str(path), line_no, message
        where = f"{self.path}:{line_no}" if line_no is not None else self.path
        super().__init__(f"{where}: {message}")


@dataclass
class RankingDataset:
    """Documents grouped by query, in file order.

    ``features`` float32 [N, F]; ``labels`` float32 [N]; ``query_ptr`` int64 [Q+1] (the documents of
    query q are rows ``query_ptr[q]:query_ptr[q+1]``); ``qids`` the Q query ids as strings;
    ``doc_ids`` optional str array [N] (from ``# docid = X`` comments). Arrays loaded from the
    cache are read-only memory maps: transform by building new arrays, never in place.
    """

    features: np.ndarray
    labels: np.ndarray
    query_ptr: np.ndarray
    qids: list[str]
    n_features: int
    doc_ids: np.ndarray | None = None

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def n_documents(self) -> int:
        return int(self.query_ptr[-1])

    def list_lengths(self) -> np.ndarray:
        """Documents per query, int64 [Q]."""
        return np.diff(self.query_ptr)

    def subset(self, query_indices) -> RankingDataset:
        """The queries ``query_indices`` (in that order) as a new, in-memory dataset."""
        q = np.asarray(query_indices, dtype=np.int64).reshape(-1)
        starts, lengths = self.query_ptr[q], self.list_lengths()[q]
        ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        rows = np.arange(ptr[-1]) - np.repeat(ptr[:-1] - starts, lengths)
        return RankingDataset(
            features=np.ascontiguousarray(self.features[rows]), labels=np.asarray(self.labels[rows]),
            query_ptr=ptr, qids=[self.qids[i] for i in q], n_features=self.n_features,
            doc_ids=None if self.doc_ids is None else np.asarray(self.doc_ids[rows]))

    def with_features(self, features: np.ndarray) -> RankingDataset:
        """The same queries and labels with another feature matrix (e.g. normalised or padded)."""
        return RankingDataset(features=features, labels=self.labels, query_ptr=self.query_ptr,
                              qids=self.qids, n_features=features.shape[1], doc_ids=self.doc_ids)


def query_minmax(x: np.ndarray, query_ptr: np.ndarray) -> np.ndarray:
    """Per-query, per-feature min-max scaling: ``(x - min_q) / (max_q - min_q)``, 0 where max = min.

    The LETOR "QueryLevelNorm" convention; fitted on each query's own documents, so nothing leaks
    across queries or splits. Vectorised with ``ufunc.reduceat`` over the query boundaries.
    """
    starts, lengths = query_ptr[:-1], np.diff(query_ptr)
    lo = np.minimum.reduceat(x, starts, axis=0)
    span = np.maximum.reduceat(x, starts, axis=0) - lo
    span[span == 0] = 1  # constant feature within a query: x - lo is 0 there, so the result is 0
    out = x - np.repeat(lo, lengths, axis=0)
    out /= np.repeat(span, lengths, axis=0)
    return out


# ----------------------------------------------------------------------------------------- parsing
def read_letor(path: str | Path, n_features: int | None = None) -> RankingDataset:
    """Parse a LETOR/SVMlight file into a :class:`RankingDataset`.

    ``n_features``: the dataset's feature count; an index above it is an error, and the matrix is
    exactly that wide (features absent from a line are 0). ``None``: width = largest index seen.
    Raises :class:`LetorFormatError` (a ``ValueError``) naming file, line and problem.
    """
    path = Path(path)
    size = path.stat().st_size  # FileNotFoundError as is: the caller's message is clearer
    chunks = _chunk_bounds(path, size)
    if not chunks:
        raise LetorFormatError(path, None, "empty file (no data lines)")
    workers = min(len(chunks), os.cpu_count() or 1)
    parallel = "fork" in multiprocessing.get_all_start_methods() and not multiprocessing.current_process().daemon
    if workers > 1 and parallel:  # a daemonic process (a multiprocessing.Pool worker) may not fork
        # fork, not spawn: spawn would re-import the caller's __main__ (a CLI, a streamlit script)
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            parts = list(pool.map(_parse_chunk, [(str(path), a, b, n_features) for a, b in chunks]))
    else:
        parts = [_parse_chunk((str(path), a, b, n_features)) for a, b in chunks]
    for (start, _), part in zip(chunks, parts):
        if isinstance(part, tuple):  # (line within chunk or None, problem)
            line = None if part[0] is None else _lines_before(path, start) + part[0]
            raise LetorFormatError(path, line, part[1])
    parts = [p for p in parts if len(p["labels"])]
    if not parts:
        raise LetorFormatError(path, None, "empty file (no data lines)")
    width = n_features if n_features is not None else max(p["features"].shape[1] for p in parts)
    features = np.zeros((sum(len(p["labels"]) for p in parts), width), dtype=np.float32)
    row = 0
    for p in parts:
        features[row:row + len(p["labels"]), :p["features"].shape[1]] = p["features"]
        row += len(p["labels"])
    labels = np.concatenate([p["labels"] for p in parts])
    query = np.concatenate([p["query"] for p in parts])
    doc_ids = None
    if any(p["doc_ids"] is not None for p in parts):
        doc_ids = np.concatenate([p["doc_ids"] if p["doc_ids"] is not None else np.full(len(p["labels"]), "")
                                  for p in parts])
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    run_qids = query[starts]
    uniq, first = np.unique(run_qids, return_index=True)
    if len(uniq) != len(run_qids):
        repeat = np.setdiff1d(np.arange(len(run_qids)), first)[0]
        earlier = int(np.flatnonzero(run_qids == run_qids[repeat])[0])
        lines = _line_numbers_of_rows(path, [starts[earlier], starts[repeat]])
        raise LetorFormatError(path, lines[1], f"qid {run_qids[repeat]} reappears after other queries "
                               f"(first seen at line {lines[0]}; a query's documents must be contiguous)")
    return RankingDataset(features=features, labels=labels, query_ptr=np.r_[starts, len(query)].astype(np.int64),
                          qids=[str(q) for q in run_qids], n_features=width, doc_ids=doc_ids)


def _chunk_bounds(path: Path, size: int) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of about CHUNK_BYTES, each starting at a line start."""
    bounds, start = [], 0
    with open(path, "rb") as fh:
        while start < size:
            end = start + CHUNK_BYTES
            if end < size:
                fh.seek(end)
                end += len(fh.readline())  # through the end of the line that straddles the cut
            bounds.append((start, min(end, size)))
            start = end
    return bounds


def _parse_chunk(args):
    """Parse one byte range; returns arrays, or ``(line within chunk, problem)`` on bad input."""
    path, start, end, n_features = args
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    return _parse_dense(data, n_features) or _parse_general(data, n_features)


def _parse_dense(data: bytes, n_features: int | None) -> dict | None:
    """The chunk's arrays when every data line is ``label qid:Q 1:v 2:v ... F:v``, else None.

    None also for anything odd (a parse error, NaN/inf, a negative label, F > ``n_features``):
    :func:`_parse_general` then parses the chunk again and reports the precise problem.
    """
    import pandas as pd

    doc_ids = None
    if b"#" in data:  # split the comments off line by line: docids must stay aligned with rows
        lines = [(stripped, comment) for body, _, comment in (line.partition(b"#") for line in data.split(b"\n"))
                 if (stripped := body.strip())]
        data = b"\n".join(body for body, _ in lines)
        doc_ids = _doc_ids([comment for _, comment in lines])
    else:
        data = data.replace(b" \n", b"\n")  # the MSLR files end each line with a space
    try:  # a chunk of only comments or blank lines raises EmptyDataError, a ValueError
        # the C engine's single-character separator is its fast tokenizer (a regex one is ~2x slower);
        # other whitespace runs give ragged rows, which fail the checks below
        table = pd.read_csv(io.BytesIO(data.replace(b":", b" ")), sep=" ", header=None, engine="c",
                            quoting=csv.QUOTE_NONE, low_memory=False, **_pandas_float_options())
    except (ValueError, OverflowError, pd.errors.ParserError):
        return None
    width = (table.shape[1] - 3) // 2
    if table.shape[1] != 3 + 2 * width or (n_features is not None and width > n_features):
        return None
    index, values = table.iloc[:, 3::2], table.iloc[:, 4::2]
    label, qid = table[0], table[2]
    if not (all(d.kind in "iu" for d in index.dtypes) and qid.dtype.kind == "i" and label.dtype.kind in "iuf"
            and all(d.kind in "iuf" for d in values.dtypes) and (table[1] == "qid").all()):
        return None
    # integers go through float64 like scikit-learn's float(text) before the float32 rounding
    x = values.to_numpy(np.float64)
    y = label.to_numpy(np.float64)
    if not ((index.to_numpy() == np.arange(1, width + 1)).all() and np.isfinite(y).all() and (y >= 0).all()
            and np.isfinite(x).all() and (np.abs(x) <= _FLOAT32_MAX).all()):
        return None
    if doc_ids is not None and len(doc_ids) != len(y):
        return None
    features = x.astype(np.float32, order="C")
    features += np.float32(0)  # -0 becomes +0, as in scikit-learn's sparse-to-dense sum
    return {"features": features, "labels": y.astype(np.float32) + np.float32(0),  # as in _parse_general
            "query": qid.to_numpy(np.int64), "doc_ids": doc_ids}


def _parse_general(data: bytes, n_features: int | None):
    """The chunk's arrays by scikit-learn's parser (any valid layout), or ``(line, problem)``."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y, q = load_svmlight_file(io.BytesIO(data), dtype=np.float64, zero_based=False,
                                     query_id=True)
    except (ValueError, OverflowError):
        return _locate_problem(data, n_features)
    bad = len(q) != len(y) or not np.isfinite(y).all() or (y < 0).any() or not np.isfinite(X.data).all() \
        or (np.abs(X.data) > _FLOAT32_MAX).any() or (n_features is not None and X.shape[1] > n_features)
    if bad:
        return _locate_problem(data, n_features)
    doc_ids = None
    if b"#" in data:
        doc_ids = _doc_ids([comment for body, _, comment in (line.partition(b"#") for line in data.split(b"\n"))
                            if body.strip()])
    # a label "-0" gives +0 (+ 0 does that), as pandas' integer column does on the fast path
    return {"features": X.astype(np.float32).toarray(), "labels": y.astype(np.float32) + np.float32(0),
            "query": q.astype(np.int64), "doc_ids": doc_ids}


def _doc_ids(comments: list[bytes]) -> np.ndarray | None:
    """The ``docid = X`` of each data line's comment ("" where none); None when no line has one."""
    ids = [m.group(1).decode("utf-8", "replace") if (m := _DOCID.search(c)) else "" for c in comments]
    return np.array(ids) if any(ids) else None


def _locate_problem(data: bytes, n_features: int | None) -> tuple[int | None, str]:
    for line_no, line in enumerate(data.split(b"\n"), start=1):
        problem = _line_problem(line, n_features)
        if problem:
            return line_no, problem
    return None, "unparseable content (scikit-learn's SVMlight parser rejected it; no line-level cause found)"


def _line_problem(line: bytes, n_features: int | None) -> str | None:
    """What is wrong with one line, or None; the reference semantics of the format."""
    tokens = line.partition(b"#")[0].split()
    if not tokens:
        return None
    text = [t.decode("utf-8", "replace") for t in tokens]
    label = _number(text[0])
    if label is None:
        return f"label {text[0]!r} is not a number"
    if not np.isfinite(label):
        return f"label {text[0]!r} is not finite"
    if label < 0:
        return f"label {text[0]} is negative (grades are >= 0; -1 marks padding)"
    if len(text) < 2 or not text[1].startswith("qid:"):
        return "missing qid (expected 'qid:<id>' as the second token)"
    if not re.fullmatch(r"[+-]?\d+", text[1][4:]):
        return f"qid {text[1][4:]!r} is not an integer"
    if abs(int(text[1][4:])) >= 2**63:
        return f"qid {text[1][4:]} is out of the int64 range"
    previous = 0
    for token in text[2:]:
        index_text, colon, value_text = token.partition(":")
        if not colon:
            return f"token {token!r} is not 'index:value'"
        if not re.fullmatch(r"\d+", index_text):
            return f"feature index {index_text!r} is not a positive integer"
        index = int(index_text)
        if index < 1:
            return f"feature index {index} out of range (indices start at 1)"
        if index >= 2**31:
            return f"feature index {index} out of range (too large)"
        if n_features is not None and index > n_features:
            return f"feature index {index} out of range (the dataset has {n_features} features)"
        if index <= previous:
            return f"feature index {index} after {previous} (indices must increase within a line)"
        previous = index
        value = _number(value_text)
        if value is None:
            return f"value {value_text!r} of feature {index} is not a number"
        if not np.isfinite(value) or abs(value) > _FLOAT32_MAX:
            return f"value {value_text!r} of feature {index} is not finite (NaN/inf or beyond float32)"
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _lines_before(path: Path, offset: int) -> int:
    """Physical lines before byte ``offset`` (error path only)."""
    with open(path, "rb") as fh:
        return fh.read(offset).count(b"\n")


def _line_numbers_of_rows(path: Path, rows) -> list[int]:
    """1-based physical line numbers of data rows (skipping blank/comment lines; error path only)."""
    wanted, found, row = {int(r) for r in rows}, {}, -1
    with open(path, "rb") as fh:
        for line_no, line in enumerate(fh, start=1):
            if line.partition(b"#")[0].strip():
                row += 1
                if row in wanted:
                    found[row] = line_no
                    if len(found) == len(wanted):
                        break
    return [found[int(r)] for r in rows]
