"""Every compared run's per-query test results, archived beside a stored result (issue 41): a gzip-compressed CSV
with one row per (run, test query), from which every p-value of the result's tables is recomputed without the run
store (:func:`ltr.report.paired.recomputed_tests`, :func:`ltr.report.seeds.seed_tests`).

Columns: :data:`COLUMNS` (``experiment, model, configuration, loss, variant, fold, seed, run_id, qid, n_relevant,
ndcg@1, ndcg@3, ndcg@5, ndcg@10``; NDCG under the study's convention, exp gain, a query without a relevant
document scoring 1). The bytes are deterministic: rows sorted, floats written with 17 significant digits (they read
back bit for bit), and the gzip header carries no file name and no time, so the same runs give the same file.
"""
from __future__ import annotations

import gzip
import io
from pathlib import Path

import pandas as pd

from core.atomic import atomic_write
from ltr.ndcg_conventions import NDCG_CUTOFFS
from ltr.report.runs import variant_loss

NDCG_COLUMNS = [f"ndcg@{k}" for k in NDCG_CUTOFFS]
COLUMNS = ["experiment", "model", "configuration", "loss", "variant", "fold", "seed", "run_id", "qid", "n_relevant",
           *NDCG_COLUMNS]
ORDER = ["experiment", "model", "variant", "fold", "seed", "qid"]


class ArchiveError(ValueError):
    """A file that is not a per-query archive (missing columns)."""


def archive_rows(frame: pd.DataFrame, *, experiment: str, model: str, configuration: str) -> pd.DataFrame:
    """A per-query frame (:func:`ltr.report.paired.per_query_frame`) of one table as archive rows."""
    rows = frame.assign(experiment=experiment, model=model, configuration=configuration,
                        loss=frame["variant"].map(variant_loss))
    return rows[COLUMNS]


def archive_bytes(rows: pd.DataFrame) -> bytes:
    """The archive's file content: sorted CSV, gzip without name or time (deterministic)."""
    ordered = rows[COLUMNS].sort_values(ORDER, kind="stable", ignore_index=True)
    text = ordered.to_csv(index=False, float_format="%.17g", lineterminator="\n")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(text.encode("utf-8"))
    return buffer.getvalue()


def write_archive(rows: pd.DataFrame, path: str | Path) -> Path:
    """Write ``rows`` (:func:`archive_rows`, any number of tables) to ``path`` atomically."""
    data = archive_bytes(rows)
    return atomic_write(path, lambda tmp: tmp.write_bytes(data))


def read_archive(path: str | Path) -> pd.DataFrame:
    """An archive as written, ``qid`` kept as text; raises :class:`ArchiveError` naming missing columns."""
    frame = pd.read_csv(path, compression="gzip", dtype={"qid": str, "run_id": str, "configuration": str})
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ArchiveError(f"{path}: not a per-query archive (missing column(s) {', '.join(missing)})")
    return frame


def table_frame(archive: pd.DataFrame, experiment: str, model: str) -> pd.DataFrame:
    """The per-query frame of one table (experiment, ranker) of an archive."""
    return archive[(archive["experiment"] == experiment) & (archive["model"] == model)].reset_index(drop=True)
