"""Equal runs get equal ids: a run's data spec in one spelling (:func:`canonical_data`)."""
from __future__ import annotations

from pathlib import Path


def canonical_data(data: str) -> str:
    """A registry name lower-cased (synthetic options sorted, options at their default dropped), a
    folder as its absolute path, a LETOR file as its absolute path with its split's options written out
    (``/abs/FILE.txt:folds=5,seed=0``), so that equal runs get equal ids."""
    from ltr.data.datasets import DATASETS
    from ltr.data.synthetic import PRESETS

    name, sep, options = data.partition(":")
    if name.lower() in DATASETS:
        name = name.lower()
        defaults = {"seed": 0, "n_queries": PRESETS[name].n_queries, "conflict": 0} if name in PRESETS else {}
        items = []
        for option in filter(None, (o.strip() for o in options.split(","))):
            key, eq, value = (part.strip() for part in option.partition("="))
            if not eq:
                items.append(option)  # malformed: kept as written so the data layer reports it
                continue
            if value.isdigit() and defaults.get(key) == int(value):
                continue  # spelled out at its default: the same data as leaving it out
            items.append(f"{key}={int(value) if value.isdigit() else value}")
        return name + (":" + ",".join(sorted(items)) if items else "")
    from core.errors import DatasetError
    from ltr.data.crossval import parse_file_split

    try:
        file_split = parse_file_split(data)
    except DatasetError:
        return data  # bad options: kept as written so the data layer reports them
    if file_split is not None:  # a LETOR file with its cross-validation written out: FILE.txt:folds=5,seed=0
        return file_split.data
    path = Path(data).expanduser()
    return str(path.resolve()) if path.exists() else data
