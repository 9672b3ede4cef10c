"""The size of a model whose outputs were imported (answers, judgments): nothing reports it, so it comes from
the data folder's ``models.tsv`` (:mod:`pipeline.data.imported`) or from the user (``--model-size``), and is
recorded with where it came from.

Order: the ``models.tsv`` row of the component's NAME, when it gives a figure, is the size (``size_source``
:data:`SOURCE_LISTED`, the row itself kept as ``listed_size``: its figure, its source, its file); a statement
then follows the rules of :func:`pipeline.llm.sizes.with_stated_size` as for any reported size: it agrees, or
it is refused as a contradiction. A row that says ``unknown`` gives no figure (it is kept, so the record says
that nothing is published): the size stays unknown, and the model's output carries no verdict, unless the
user states one. Without a row the size is the user's statement or unknown, as before.
"""
from __future__ import annotations

from typing import Mapping

from core.errors import DatasetError
from pipeline.data.imported import MODELS_FILE, ListedSize
from pipeline.llm.sizes import billions, stated_record

SOURCE_LISTED = MODELS_FILE  # a size read from the data folder's models.tsv ("70B (models.tsv)")


def listed_billions(listed: ListedSize) -> float | None:
    """The row's figure in billions; None where it says ``unknown``; a figure that is no size is a
    :class:`DatasetError` naming the file and the model."""
    if not listed.known:
        return None
    try:
        return billions(listed.parameters)
    except ValueError as exc:
        raise DatasetError(f"{listed.file}: model {listed.name}: {exc}") from None


def imported_record(record: Mapping, listed: ListedSize | None, stated: Mapping[str, float] | None) -> dict:
    """An imported component's provenance ``record`` with its size (module docstring): the ``models.tsv``
    row ``listed`` (None: the folder lists no such model), then the user's ``stated`` sizes."""
    out = dict(record)
    if listed is not None:
        out["listed_size"] = listed.as_dict()
        value = listed_billions(listed)
        if value is not None:
            out.update(parameters_b=value, size_source=SOURCE_LISTED)
    # stated_record sets ``small`` from the size and marks a sub-1B model's label, listed or stated
    return stated_record(out, stated)
