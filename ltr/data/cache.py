"""Binary cache of parsed LETOR files under ``cache/letor/``.

An entry is a folder of uncompressed ``.npy`` files named by the SHA-256 of the file's bytes, the
parser version, the requested width and whether features are query-normalised, so an edited file
(or a new parser) never hits a stale entry, and a copy of the same file elsewhere hits. Loading
memory-maps the feature matrix, so a warm load costs milliseconds whatever the file size.
SHA-256 because CPUs hash it in hardware (about 1 GB/s); a small stat memo
(path, size, mtime, inode -> digest) skips even that on reload.

Entries are written to a temporary folder and renamed into place, so a crash or a parse error never
leaves a partial entry; two processes filling the same entry at once both succeed (one rename wins).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from core.atomic import atomic_write_text, publish_dir
from core.paths import cache_subdir
from ltr.data.letor import PARSER_VERSION, RankingDataset, query_minmax, read_letor


def load_cached(path: str | Path, n_features: int | None = None,
                query_normalise: bool = False) -> RankingDataset:
    """:func:`ltr.data.letor.read_letor` through the cache (same arguments, same result).

    ``query_normalise``: store and return the per-query min-max normalised features
    (:func:`ltr.data.letor.query_minmax`), so raw data sets (WEB10K, Yahoo) also reload instantly.
    """
    path = Path(path)
    root = cache_subdir("letor")
    entry = root / (f"{file_digest(path)[:40]}-p{PARSER_VERSION}-f{n_features or 'auto'}"
                    + ("-qnorm" if query_normalise else ""))
    if (entry / "meta.json").is_file():
        return _load_entry(entry)
    ds = read_letor(path, n_features)  # raises before anything is written
    if query_normalise:
        ds = ds.with_features(query_minmax(ds.features, ds.query_ptr))
    with publish_dir(entry) as staging:
        _write_entry(staging, ds, source=path)
    return _load_entry(entry)


def file_digest(path: Path) -> str:
    """SHA-256 hex digest of the file's bytes, memoised on (path, size, mtime_ns, inode)."""
    st = path.stat()
    stamp = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"
    memo = cache_subdir("letor", "digests") / f"{hashlib.sha256(stamp.encode()).hexdigest()[:32]}.txt"
    if memo.is_file():
        return memo.read_text().strip()
    with open(path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    atomic_write_text(memo, digest)
    return digest


def _write_entry(folder: Path, ds: RankingDataset, source: Path) -> None:
    np.save(folder / "features.npy", np.ascontiguousarray(ds.features, dtype=np.float32))
    np.save(folder / "labels.npy", np.asarray(ds.labels, dtype=np.float32))
    np.save(folder / "query_ptr.npy", np.asarray(ds.query_ptr, dtype=np.int64))
    np.save(folder / "qids.npy", np.asarray(ds.qids, dtype=str))
    if ds.doc_ids is not None:
        np.save(folder / "doc_ids.npy", np.asarray(ds.doc_ids, dtype=str))
    # meta.json last: its presence marks a complete entry
    (folder / "meta.json").write_text(json.dumps({
        "source": str(source), "n_features": ds.n_features, "n_queries": ds.n_queries,
        "n_documents": ds.n_documents, "parser_version": PARSER_VERSION}))


def _load_entry(folder: Path) -> RankingDataset:
    meta = json.loads((folder / "meta.json").read_text())
    doc_ids = folder / "doc_ids.npy"
    return RankingDataset(
        features=np.load(folder / "features.npy", mmap_mode="r"),
        labels=np.load(folder / "labels.npy"),
        query_ptr=np.load(folder / "query_ptr.npy"),
        qids=np.load(folder / "qids.npy").tolist(),
        n_features=int(meta["n_features"]),
        doc_ids=np.load(doc_ids, mmap_mode="r") if doc_ids.is_file() else None)
