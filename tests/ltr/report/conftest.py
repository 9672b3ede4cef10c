"""A small run store of one configuration: 4 losses x 5 folds x 3 seeds x 20 test queries, no training."""
from __future__ import annotations

import numpy as np
import pytest

from ltr.store import RunStore
from tests.ltr.report.support import (FOLDS, LEADS, NEURALLOSS_SHIFTS, NO_RELEVANT_PER_FOLD, PER_FOLD, SEEDS,
                                      store_run)


@pytest.fixture
def small_store(tmp_path):
    """The store and its path; the per-query values are fixed by the seed of the generator."""
    rng = np.random.default_rng(7)
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        for fold in FOLDS:
            qids = [f"{fold}_{i}" for i in range(PER_FOLD)]
            relevant = {q: (0 if i < NO_RELEVANT_PER_FOLD else 1 + i % 3) for i, q in enumerate(qids)}
            base = rng.uniform(0.3, 0.8, PER_FOLD)
            for seed in SEEDS:
                for loss, lead in LEADS.items():
                    shift = NEURALLOSS_SHIFTS[seed] if loss == "neuralloss" else 0.0
                    values = base + lead + shift + rng.normal(0, 0.02, PER_FOLD)
                    store_run(store, loss, fold, seed, dict(zip(qids, values)), relevant)
        yield store, path
