"""Cross-validation of one LETOR file by query: the file's queries split into ``folds`` parts at random
(``numpy.random.default_rng(seed)``), rotated as LETOR rotates its five parts (Fold k trains on the parts
k .. k+folds-3, validates on part k+folds-2 and tests on part k+folds-1, mod ``folds``: for 5 folds, three
parts of training, one of validation, one of test), each part's queries kept in the file's order.

Two ways in, one split:

- ``ltr split FILE --folds 5 --seed 0 --out DIR`` writes the LETOR folder ``DIR/FoldK/{train,vali,test}.txt``
  plus ``DIR/split.json`` (source file, its sha256, folds, seed, queries per part);
- ``--data FILE.txt[:folds=5,seed=0]`` (``ltr train``, grids, the bench) trains on that split directly: the
  data set is named by the user's file and its options (run ids ``<file name>_folds_5_seed_0-f1-...``,
  tables and figures ``/path/FILE.txt:folds=5,seed=0``); the folder behind it is written once into the cache,
  keyed by the file's content hash, and never shows as the data's name.

The split is a function of the file's content, ``folds`` and ``seed`` only: the same file gives the same
folds on any machine. Lines are copied byte for byte (comments included); the file is parsed first
(:func:`ltr.data.letor.read_letor`), so a malformed line is reported with its number before anything is written.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.atomic import publish_dir
from core.errors import DatasetError

SPLITS = ("train", "vali", "test")
MARKER = "split.json"
SPLIT_VERSION = 1
DEFAULT_FOLDS, DEFAULT_SEED = 5, 0


@dataclass(frozen=True)
class FileSplit:
    """``FILE:folds=F,seed=S``: a LETOR file cross-validated by query."""

    path: Path  # absolute
    folds: int = DEFAULT_FOLDS
    seed: int = DEFAULT_SEED

    @property
    def data(self) -> str:
        """The data set's one spelling (what runs store as their ``data``): every option written out."""
        return f"{self.path}:folds={self.folds},seed={self.seed}"

    @property
    def name(self) -> str:
        return f"{self.path.name}:folds={self.folds},seed={self.seed}"


def parse_file_split(data: str) -> FileSplit | None:
    """The :class:`FileSplit` of ``FILE.txt`` or ``FILE.txt:folds=5,seed=0`` when FILE is a file, else None
    (a registry name or a folder). Raises :class:`DatasetError` for bad options."""
    text = str(data)
    head, sep, options = text.rpartition(":")
    if sep and "=" in options and Path(head).expanduser().is_file():
        path, options = Path(head).expanduser().resolve(), options
    elif Path(text).expanduser().is_file():
        path, options = Path(text).expanduser().resolve(), ""
    else:
        return None
    values = {"folds": DEFAULT_FOLDS, "seed": DEFAULT_SEED}
    for item in filter(None, (o.strip() for o in options.split(","))):
        key, eq, value = (part.strip() for part in item.partition("="))
        if key not in values or not eq or not value.isdigit():
            raise DatasetError(f"{path.name}: bad option {item!r} (expected folds=<int>, seed=<int>)")
        values[key] = int(value)
    check_split_settings(values["folds"], values["seed"])
    return FileSplit(path, values["folds"], values["seed"])


def check_split_settings(folds: int, seed: int) -> None:
    if folds < 3:
        raise DatasetError(f"folds={folds}: need at least 3 (training, validation and test parts)")
    if seed < 0:
        raise DatasetError(f"seed={seed}: must be >= 0")


def _query_blocks(path: Path) -> dict[str, list[bytes]]:
    """The file's lines grouped by query id, queries in order of first appearance (lines kept as bytes)."""
    from ltr.data.letor import read_letor

    read_letor(path)  # a malformed file is refused here, naming its line, before anything is written
    blocks: dict[str, list[bytes]] = {}
    with open(path, "rb") as fh:
        for line in fh:
            tokens = line.split(b"#", 1)[0].split()
            if len(tokens) < 2:
                continue  # a blank or comment-only line (the reader accepted the file)
            blocks.setdefault(tokens[1].decode(), []).append(line if line.endswith(b"\n") else line + b"\n")
    return blocks


def query_parts(n_queries: int, folds: int, seed: int) -> list[np.ndarray]:
    """The query indices of each part: a seeded permutation cut into ``folds`` near-equal parts, each sorted."""
    if n_queries < folds:
        raise DatasetError(f"{n_queries} queries cannot fill {folds} folds (need at least one query per part)")
    return [np.sort(part) for part in np.array_split(np.random.default_rng(seed).permutation(n_queries), folds)]


def fold_parts(fold: int, folds: int) -> dict[str, list[int]]:
    """Which parts make fold ``fold``'s (1-based) train, vali and test: LETOR's rotation."""
    start = fold - 1
    return {"train": [(start + j) % folds for j in range(folds - 2)], "vali": [(start + folds - 2) % folds],
            "test": [(start + folds - 1) % folds]}


def write_letor_folds(source: str | Path, out: str | Path, *, folds: int = DEFAULT_FOLDS,
                      seed: int = DEFAULT_SEED) -> Path:
    """Write the split of ``source`` into ``out/FoldK/{train,vali,test}.txt`` and ``out/split.json``.

    ``out`` must not exist, be empty, or hold this same split (then it is left as it is); the folder appears
    complete or not at all. Raises :class:`DatasetError` (or :class:`ltr.data.letor.LetorFormatError`)."""
    source, out = Path(source).expanduser().resolve(), Path(out).expanduser()
    if not source.is_file():
        raise DatasetError(f"no such file: {source}")
    check_split_settings(folds, seed)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    record = {"source": source.name, "source_sha256": digest, "folds": folds, "seed": seed,
              "version": SPLIT_VERSION,
              "rotation": "Fold k: train parts k..k+folds-3, vali part k+folds-2, test part k+folds-1 (mod folds)"}
    if out.exists():
        existing = out / MARKER
        if existing.is_file():
            stored = json.loads(existing.read_text(encoding="utf-8"))
            if {k: stored.get(k) for k in ("source_sha256", "folds", "seed", "version")} == \
                    {k: record[k] for k in ("source_sha256", "folds", "seed", "version")}:
                return out
            raise DatasetError(f"{out} holds another split ({stored.get('source')}, folds={stored.get('folds')}, "
                               f"seed={stored.get('seed')}); give an empty or new folder")
        if not out.is_dir() or any(out.iterdir()):
            raise DatasetError(f"{out} exists and is not an empty folder; give an empty or new folder")
        out.rmdir()  # empty: published in its place below
    blocks = _query_blocks(source)
    qids = list(blocks)
    parts = query_parts(len(qids), folds, seed)
    text = [b"".join(line for i in part for line in blocks[qids[i]]) for part in parts]
    record["queries_per_part"] = [int(p.size) for p in parts]
    record["queries"] = len(qids)
    with publish_dir(out, marker=MARKER) as staging:
        for k in range(1, folds + 1):
            folder = staging / f"Fold{k}"
            folder.mkdir()
            for split, which in fold_parts(k, folds).items():
                (folder / f"{split}.txt").write_bytes(b"".join(text[i] for i in which))
        (staging / MARKER).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return out


def split_folder(split: FileSplit) -> Path:
    """The cached folder of ``split`` (written on first use), keyed by the file's content: a changed file
    gets a new split (and a run of the old one is refused: its data signature changes)."""
    from core.paths import cache_subdir

    digest = hashlib.sha256(split.path.read_bytes()).hexdigest()[:16]
    folder = cache_subdir("letor_folds") / f"{split.path.stem}-{digest}-folds{split.folds}-seed{split.seed}"
    if not (folder / MARKER).is_file():
        write_letor_folds(split.path, folder, folds=split.folds, seed=split.seed)
    return folder
