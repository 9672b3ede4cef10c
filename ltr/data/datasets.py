"""Registry of LETOR data sets and fold loading.

Real data sets are read from the folder configured for them (``core.paths.data_folder(name)``:
env ``IRDASH_DATA_<NAME>`` or ``[data]`` in ``irdash.toml``), which must hold
``Fold1/ ... Fold5/``, each with ``train.txt``, ``vali.txt`` and ``test.txt`` - the layout
MQ2007, MQ2008 and MSLR-WEB10K ship in.

Yahoo LTR set 1 ships a single split (``set1.train.txt``, ``set1.valid.txt``, ``set1.test.txt``);
the study uses 5-fold cross-validation, so the user prepares ``Fold1..Fold5`` folders in the same
layout (e.g. pool the three files, split the queries into 5 parts, rotate as LETOR does:
Fold k trains on parts k, k+1, k+2, validates on k+3, tests on k+4, mod 5). Yahoo files are sparse
(absent features are 0), so a split may have a smaller largest index than 700; it is padded.

``data`` may also be a synthetic preset (generated once into ``cache/synthetic/``), with options
``synthetic-web10k:n_queries=2000,seed=1``, a path to any folder of ``FoldK/`` files (used as is,
no normalisation; its feature count is the widest of Fold1's three files, narrower files are padded), or
one LETOR file cross-validated by query, ``FILE.txt[:folds=5,seed=0]`` (:mod:`ltr.data.crossval`).
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import DatasetError
from core.paths import cache_subdir, data_folder
from ltr.data.cache import load_cached
from ltr.data.letor import RankingDataset
from ltr.data.synthetic import GENERATOR_VERSION, PRESETS, write_synthetic

SPLITS = ("train", "vali", "test")


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    n_features: int | None  # None: a user folder, the width is taken from its files
    max_grade: int | None
    n_folds: int = 5
    query_normalise: bool = False  # per-query min-max of every feature (raw releases)
    synthetic: bool = False
    sparse: bool = False  # absent features are 0, so a file may be narrower than n_features
    description: str = ""
    # The study's training slate for data sets with long lists (allRank's 240 for WEB10K and Yahoo):
    # what ltr/configs/study_grid.toml uses, and what the dashboard's form proposes. None: whole lists.
    study_slate_length: int | None = None


DATASETS: dict[str, DatasetSpec] = {
    "mq2007": DatasetSpec("mq2007", 46, 2, description="LETOR 4.0 MQ2007 (QueryLevelNorm release)"),
    "mq2008": DatasetSpec("mq2008", 46, 2, description="LETOR 4.0 MQ2008 (QueryLevelNorm release)"),
    "web10k": DatasetSpec("web10k", 136, 4, query_normalise=True, description="MSLR-WEB10K (raw features)",
                          study_slate_length=240),
    "yahoo": DatasetSpec("yahoo", 700, 4, query_normalise=True, sparse=True,
                         description="Yahoo LTR set 1 (Fold1..5 prepared by the user)", study_slate_length=240),
}
for _name, _preset in PRESETS.items():
    _real = DATASETS[_name.removeprefix("synthetic-")]
    DATASETS[_name] = DatasetSpec(
        _name, _preset.n_features, _preset.max_grade, query_normalise=_real.query_normalise,
        synthetic=True, sparse=_real.sparse, study_slate_length=_real.study_slate_length,
        description=f"synthetic, shaped like {_real.name} ({_preset.n_queries} queries by default)")


def resolve_dataset(data: str) -> tuple[DatasetSpec, Path]:
    """``(spec, folder holding FoldK/)`` for a registry name, a synthetic preset or a folder path.

    Synthetic presets are generated on first use. Raises :class:`DatasetError`.
    """
    from ltr.data.crossval import parse_file_split, split_folder

    file_split = parse_file_split(data)
    if file_split is not None:  # one LETOR file, cross-validated by query (ltr.data.crossval)
        folder = split_folder(file_split)
        widest = max(_load(folder / "Fold1" / f"{s}.txt").n_features for s in SPLITS)
        return DatasetSpec(file_split.name, widest, None, n_folds=file_split.folds, sparse=True,
                           description=f"{file_split.path} split by query"), folder
    name, _, options = str(data).partition(":")
    spec = DATASETS.get(name.lower())
    if spec is not None and spec.synthetic:
        return spec, _synthetic_folder(spec.name, options)
    if options and spec is not None:
        raise DatasetError(f"{data!r}: options are only for synthetic presets")
    if spec is not None:
        folder = data_folder(spec.name)
        if folder is None:
            raise DatasetError(f"dataset {spec.name!r} has no folder configured: set IRDASH_DATA_"
                               f"{spec.name.upper()} or [data] {spec.name} = \"...\" in irdash.toml")
        if not folder.is_dir():
            raise DatasetError(f"dataset {spec.name!r}: configured folder {folder} does not exist")
        return spec, folder
    folder = Path(data).expanduser()
    if folder.is_dir():
        if not (folder / "Fold1").is_dir():
            raise DatasetError(f"{folder}: no Fold1/ folder (expected FoldK/{{train,vali,test}}.txt)")
        n_folds = sum(1 for k in range(1, 100) if (folder / f"Fold{k}").is_dir())
        widest = max(_load(folder / "Fold1" / f"{s}.txt").n_features for s in SPLITS)
        # sparse=True: a fold file narrower than Fold1's widest is padded, a wider one is an error
        return DatasetSpec(folder.name, widest, None, n_folds=n_folds, sparse=True), folder
    raise DatasetError(f"unknown dataset {data!r}: expected one of {', '.join(DATASETS)}, "
                       f"a folder holding Fold1/..Fold5/ or a LETOR file (FILE.txt[:folds=5,seed=0])")


@dataclass(frozen=True)
class FolderCheck:
    """What a cheap look at a data folder found: complete folds, feature count, problems in words."""

    folds: int  # folds with all three split files
    n_features: int | None  # the widest first line seen (None: no file readable)
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """``found · 5 folds · 136 features`` or ``broken: <first problem> (+N more)``."""
        if self.ok:
            return f"found · {self.folds} folds · {self.n_features} features"
        more = f" (+{len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        return f"broken: {self.problems[0]}{more}"


def _first_line_features(path: Path) -> int:
    """The largest feature index on the first line of a LETOR file (``label qid:Q i:v ... # c``)."""
    with open(path, "rb") as fh:
        line = fh.readline().decode("utf-8", errors="replace")
    tokens = line.split("#", 1)[0].split()
    if len(tokens) < 2 or not tokens[1].startswith("qid:"):
        raise ValueError(f"{path}:1: not a LETOR line (expected 'label qid:Q i:v ...')")
    indices = [int(t.split(":", 1)[0]) for t in tokens[2:] if ":" in t and t.split(":", 1)[0].isdigit()]
    return max(indices, default=0)


def check_folder(spec: DatasetSpec, folder: Path) -> FolderCheck:
    """Check ``folder`` against ``spec`` cheaply: every ``FoldK/{train,vali,test}.txt`` present and the
    first line of each file as wide as the data set (at most as wide for sparse ones). Reads one line
    per file, so the Home page can run it on every visit."""
    problems, widest, complete = [], None, 0
    missing_folds = [k for k in range(1, spec.n_folds + 1) if not (folder / f"Fold{k}").is_dir()]
    if missing_folds:
        found = spec.n_folds - len(missing_folds)
        problems.append(f"{found} of {spec.n_folds} folds (no {', '.join(f'Fold{k}/' for k in missing_folds)})")
    for k in range(1, spec.n_folds + 1):
        if k in missing_folds:
            continue
        files = [folder / f"Fold{k}" / f"{split}.txt" for split in SPLITS]
        absent = [f.name for f in files if not f.is_file()]
        if absent:
            problems.append(f"Fold{k}/ has no {', '.join(absent)}")
            continue
        complete += 1
        for f in files:
            try:
                width = _first_line_features(f)
            except (OSError, ValueError) as exc:
                problems.append(" ".join(str(exc).split()))
                continue
            widest = width if widest is None else max(widest, width)
            if spec.n_features and (width > spec.n_features or (width < spec.n_features and not spec.sparse)):
                problems.append(f"Fold{k}/{f.name} line 1 has {width} features, {spec.name} has {spec.n_features}")
    return FolderCheck(complete, widest, tuple(problems))


def load_fold(data: str, fold: int, split: str) -> RankingDataset:
    """One split of one fold, checked against the spec and query-normalised when the spec says so."""
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r}: expected one of {', '.join(SPLITS)}")
    spec, folder = resolve_dataset(data)
    if not 1 <= int(fold) <= spec.n_folds:
        raise DatasetError(f"{spec.name}: fold {fold} does not exist (folds 1..{spec.n_folds})")
    path = folder / f"Fold{int(fold)}" / f"{split}.txt"
    ds = _load(path, query_normalise=spec.query_normalise)
    width = spec.n_features
    if ds.n_features > width or (ds.n_features < width and not spec.sparse):
        raise DatasetError(f"{path}: {ds.n_features} features, but {spec.name} has {width} "
                           f"(is the folder of the right dataset?)")
    if ds.n_features < width:  # sparse: absent trailing features are 0 (0 after normalisation too)
        padded = np.zeros((ds.n_documents, width), dtype=np.float32)
        padded[:, :ds.n_features] = ds.features
        ds = ds.with_features(padded)
    return ds


def _load(path: Path, query_normalise: bool = False) -> RankingDataset:
    if not path.is_file():
        raise DatasetError(f"missing fold file {path}")
    return load_cached(path, query_normalise=query_normalise)


def _synthetic_folder(preset: str, options: str) -> Path:
    """``cache/synthetic/<preset>[-q<N>]-seed<S>/``, generated on first use (or after a generator change)."""
    seed, n_queries, conflict = 0, None, 0
    for item in filter(None, (o.strip() for o in options.split(","))):
        key, eq, value = item.partition("=")
        if key.strip() not in ("seed", "n_queries", "conflict") or not eq or not value.strip().isdigit():
            raise DatasetError(f"{preset}: bad option {item!r} (expected seed=<int>, n_queries=<int>, conflict=0|1)")
        if key.strip() == "seed":
            seed = int(value)
        elif key.strip() == "conflict":
            conflict = int(value)
        else:
            n_queries = int(value)
    if n_queries is not None and n_queries < 5:
        raise DatasetError(f"{preset}: n_queries={n_queries}, need at least 5 (one per fold part)")
    folder = cache_subdir("synthetic") / (preset + (f"-q{n_queries}" if n_queries else "") + f"-seed{seed}"
                                          + ("-conflict" if conflict else ""))
    meta = folder / "meta.json"
    if meta.is_file() and json.loads(meta.read_text()).get("generator_version") != GENERATOR_VERSION:
        shutil.rmtree(folder, ignore_errors=True)
    if not meta.is_file():
        write_synthetic(preset, folder, seed=seed, n_queries=n_queries, conflict=bool(conflict))
    return folder


def display_name(data: str) -> str:
    """The user's name for ``data`` as runs store it: a registry name or synthetic preset as it is
    (``mq2008``, ``synthetic-web10k:seed=1``), a folder path by the folder's name (the MQ2008 sample at
    ``…/cache/letor_folds/mq2008-sample`` is ``mq2008-sample``). What selectors, titles, captions and
    LaTeX show; the stored path stays in the run's config and in manifests."""
    text = str(data)
    name = text.partition(":")[0].lower()
    if name in DATASETS:
        return text
    return Path(text).expanduser().name or text
