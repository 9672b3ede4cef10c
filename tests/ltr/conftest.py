"""Fixtures of the ltr tests: one torch thread, a tiny synthetic data set."""
from __future__ import annotations

import pytest

from tests.ltr.support import TINY_QUERIES, one_torch_thread


@pytest.fixture
def one_thread(monkeypatch):
    """Tiny batches train fastest on one thread, and the suite may share 2 cores with other work:
    torch's default of one OpenMP thread per core then oversubscribes (10x slower epochs). A module
    whose tests all train says ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # subprocesses
    with one_torch_thread():  # and IRDASH_TORCH_THREADS=1: what train_run applies, here and in subprocesses
        yield


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory) -> str:
    """A small synthetic MQ2008-shaped data set (folder of FoldK/), written by the data layer."""
    from ltr.data.synthetic import write_synthetic

    out = tmp_path_factory.mktemp("tiny") / "mq2008-like"
    write_synthetic("synthetic-mq2008", out, seed=3, n_queries=3 * TINY_QUERIES)
    return str(out)
