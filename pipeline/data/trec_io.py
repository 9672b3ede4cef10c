"""Readers and a writer for the TREC file formats of the failure study.

Formats (whitespace-separated unless said otherwise):

- topics: ``qid<TAB>query`` (the anserini-tools layout of ``topics.dl19-passage.txt``);
- qrels: ``qid iter pid grade`` with an integer grade in 0-3 (NIST's passage scale, which every
  convention of the study assumes: relevant = grade >= 2, graded disagreement = |difference| > 1);
- run: ``qid Q0 pid rank score tag`` (trec_eval's run format);
- passages: ``pid<TAB>text`` (MS MARCO ``collection.tsv``) or, with a header line
  ``pid<TAB>judged_in<TAB>text``, the layout of ``shared/data/trec_dl/passages.*.tsv``.

The readers are strict on purpose: a malformed line, a duplicate (qid, pid) pair or a query id
outside the expected topic set raises :class:`TrecFormatError` naming the file and line, since a
silently skipped line changes every per-query NDCG downstream.
"""
from __future__ import annotations

from pathlib import Path
from typing import Collection, Mapping

from core.atomic import atomic_write_text

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


class TrecFormatError(ValueError):
    """A malformed or inconsistent line in a TREC file: ``path:line: message``."""

    def __init__(self, path: str | Path, line_no: int | None, message: str):
        self.path = str(path)
        self.line_no = line_no
        self.message = message
        where = f"{self.path}:{line_no}" if line_no is not None else self.path
        super().__init__(f"{where}: {message}")


def _lines(path: str | Path):
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    with open(path, encoding="utf-8", errors="strict") as fh:
        try:
            for line_no, line in enumerate(fh, start=1):
                yield line_no, line.rstrip("\n").rstrip("\r")
        except UnicodeDecodeError as exc:
            raise TrecFormatError(path, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def read_topics(path: str | Path) -> dict[str, str]:
    """``{qid: query}`` in file order; blank lines are skipped, duplicates are an error."""
    topics: dict[str, str] = {}
    for line_no, line in _lines(path):
        if not line.strip():
            continue
        qid, sep, query = line.partition("\t")
        qid, query = qid.strip(), query.strip()
        if not sep or not qid or not query:
            raise TrecFormatError(path, line_no, f"expected 'qid<TAB>query', got {line[:80]!r}")
        if qid in topics:
            raise TrecFormatError(path, line_no, f"duplicate query id {qid}")
        topics[qid] = query
    if not topics:
        raise TrecFormatError(path, None, "no topics in file")
    return topics


def _check_known(path, unknown: dict[str, int], n_qids: int, known_qids: Collection[str], what: str):
    """Raise on query ids outside ``known_qids``; say so plainly when (nearly) all are foreign."""
    if not unknown:
        return
    qid, line_no = next(iter(unknown.items()))
    if len(unknown) * 2 > n_qids:
        raise TrecFormatError(
            path, line_no,
            f"{len(unknown)} of {n_qids} query ids are not topics of this dataset (first: {qid}); "
            f"is this {what} for another dataset?")
    raise TrecFormatError(path, line_no, f"unknown query id {qid} ({len(unknown)} unknown of {n_qids})")


def _read_pairs(path: str | Path, known_qids: Collection[str] | None, *, fields: str, parse, duplicate: str,
                empty: str, what: str) -> dict[str, dict[str, float]]:
    """``{qid: {pid: value}}`` from a TREC file whose lines have the fields ``fields`` names.

    ``parse(fields, path, line_no) -> (qid, pid, value)`` checks one line's fields (raising
    :class:`TrecFormatError`); a (qid, pid) seen twice, an empty file and (with ``known_qids``)
    foreign query ids are errors naming the file and line.
    """
    n_fields = len(fields.split())
    table: dict[str, dict[str, float]] = {}
    unknown: dict[str, int] = {}
    for line_no, line in _lines(path):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != n_fields:
            raise TrecFormatError(path, line_no, f"expected {n_fields} fields '{fields}', got {len(parts)}")
        qid, pid, value = parse(parts, path, line_no)
        row = table.setdefault(qid, {})
        if pid in row:
            raise TrecFormatError(path, line_no, f"duplicate {duplicate} for query {qid}, passage {pid}")
        row[pid] = value
        if known_qids is not None and qid not in known_qids and qid not in unknown:
            unknown[qid] = line_no
    if not table:
        raise TrecFormatError(path, None, empty)
    if known_qids is not None:
        _check_known(path, unknown, len(table), known_qids, what)
    return table


GRADES = range(0, 4)  # NIST's 0 (irrelevant) .. 3 (perfectly relevant)


def _qrels_line(fields: list[str], path, line_no: int) -> tuple[str, str, int]:
    qid, _, pid, grade_text = fields
    try:
        grade = int(grade_text)
    except ValueError:
        raise TrecFormatError(path, line_no, f"grade {grade_text!r} is not an integer") from None
    if grade not in GRADES:
        # not clipped: a 4 or a -1 means the file is not on the scale it claims (or not a qrels file)
        raise TrecFormatError(path, line_no, f"grade {grade} is outside 0-3")
    return qid, pid, grade


def _run_line(fields: list[str], path, line_no: int) -> tuple[str, str, float]:
    qid, _, pid, rank_text, score_text, _ = fields
    try:
        int(rank_text)
    except ValueError:
        raise TrecFormatError(path, line_no, f"rank {rank_text!r} is not an integer") from None
    try:
        score = float(score_text)
    except ValueError:
        raise TrecFormatError(path, line_no, f"score {score_text!r} is not a number") from None
    if score != score:
        raise TrecFormatError(path, line_no, "score is NaN")
    return qid, pid, score


def read_qrels(path: str | Path, known_qids: Collection[str] | None = None) -> Qrels:
    """``{qid: {pid: grade}}``. Four fields per line; integer grades in 0-3; no duplicate (qid, pid)."""
    return _read_pairs(path, known_qids, fields="qid iter pid grade", parse=_qrels_line, duplicate="judgment",
                       empty="no judgments in file", what="a qrels file")


def read_run(path: str | Path, known_qids: Collection[str] | None = None) -> Run:
    """``{qid: {pid: score}}`` from a six-field TREC run; no duplicate (qid, pid) pairs.

    Ranks are validated as integers but not used: trec_eval (and ir_measures) rank by score,
    breaking ties by passage id, which is what the evaluation reproduces.
    """
    return _read_pairs(path, known_qids, fields="qid Q0 pid rank score tag", parse=_run_line, duplicate="entry",
                       empty="no run lines in file", what="a run")


def read_run_tag(path: str | Path) -> str | None:
    """The tag (sixth field) of the first run line, or None for an empty file."""
    for _, line in _lines(path):
        fields = line.split()
        if len(fields) == 6:
            return fields[5]
    return None


def read_passages(path: str | Path) -> dict[str, str]:
    """``{pid: text}`` from ``pid<TAB>text`` or the headed ``pid<TAB>judged_in<TAB>text`` layout."""
    passages: dict[str, str] = {}
    text_column = 1
    for line_no, line in _lines(path):
        if line_no == 1 and line.startswith("pid\t"):
            header = line.split("\t")
            if "text" not in header:
                raise TrecFormatError(path, 1, f"header has no 'text' column: {header}")
            text_column = header.index("text")
            continue
        if not line.strip():
            continue
        fields = line.split("\t", text_column)
        if len(fields) != text_column + 1 or not fields[0].strip():
            raise TrecFormatError(path, line_no, f"expected {text_column + 1} tab-separated fields")
        pid = fields[0].strip()
        if pid in passages:
            raise TrecFormatError(path, line_no, f"duplicate passage id {pid}")
        passages[pid] = fields[text_column]
    if not passages:
        raise TrecFormatError(path, None, "no passages in file")
    return passages


def format_run(run: Mapping[str, Mapping[str, float]], tag: str) -> str:
    """TREC run text: per query, passages by descending score (ties by descending pid, as trec_eval)."""
    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"run tag must be one non-empty word, got {tag!r}")
    out = []
    for qid, ranked in run.items():
        order = sorted(ranked.items(), key=lambda item: (item[1], item[0]), reverse=True)
        out.extend(f"{qid} Q0 {pid} {rank} {score:.6f} {tag}\n" for rank, (pid, score) in enumerate(order, 1))
    return "".join(out)


def write_run(run: Mapping[str, Mapping[str, float]], path: str | Path, tag: str) -> Path:
    """Write ``run`` atomically in TREC format."""
    return atomic_write_text(path, format_run(run, tag))
