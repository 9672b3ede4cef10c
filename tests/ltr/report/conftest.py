"""A small run store of one configuration: 4 losses x 5 folds x 3 seeds x 20 test queries, no training."""
from __future__ import annotations

import pytest

from ltr.store import RunStore
from tests.ltr.report.support import build_store


@pytest.fixture
def small_store(tmp_path):
    """The store and its path (:func:`tests.ltr.report.support.build_store`)."""
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        build_store(store)
        yield store, path
