"""A small run store of one configuration, built without training (the fixture is in ``conftest.py``)."""
from __future__ import annotations

import numpy as np

from ltr.ndcg_conventions import N_RELEVANT, NDCG_CUTOFFS

DATA, MODEL, FOLDS, SEEDS, PER_FOLD, NO_RELEVANT_PER_FOLD = "synthetic-mq2008", "mlp", range(1, 6), (0, 1, 2), 20, 3
# a loss's lead over the base per query: ranknet trails learndcg, listnet is learndcg with noise, and neuralloss is
# learndcg but for its runs' large shifts by seed (NEURALLOSS_SHIFTS, mean -0.01); the other runs do not shift
LEADS = {"learndcg": 0.03, "neuralloss": 0.03, "ranknet": -0.02, "listnet": 0.03}
NEURALLOSS_SHIFTS = {0: -0.06, 1: -0.02, 2: 0.05}


def store_run(store, loss, fold, seed, values, relevant, *, data=DATA, experiment=None):
    run_id = f"{loss}-{fold}-{seed}"
    store.register_run(run_id, {"data": data, "fold": fold, "loss": loss, "model": MODEL, "seed": seed},
                       experiment=experiment)
    store.start_run(run_id, device="cpu")
    per_query = {f"ndcg@{k}": {q: float(min(1.0, v * (1 + k / 100))) if relevant[q] else 1.0
                               for q, v in values.items()} for k in NDCG_CUTOFFS}
    means = {m: float(np.mean(list(pq.values()))) for m, pq in per_query.items()}
    store.finish_run(run_id, test_means=means, per_query={**per_query, N_RELEVANT: relevant}, train_seconds=1.0)


def build_store(store, *, data=DATA, experiment=None) -> None:
    """Every run of the small study into ``store``; the per-query values are fixed by the generator's seed."""
    rng = np.random.default_rng(7)
    for fold in FOLDS:
        qids = [f"{fold}_{i}" for i in range(PER_FOLD)]
        relevant = {q: (0 if i < NO_RELEVANT_PER_FOLD else 1 + i % 3) for i, q in enumerate(qids)}
        base = rng.uniform(0.3, 0.8, PER_FOLD)
        for seed in SEEDS:
            for loss, lead in LEADS.items():
                shift = NEURALLOSS_SHIFTS[seed] if loss == "neuralloss" else 0.0
                values = base + lead + shift + rng.normal(0, 0.02, PER_FOLD)
                store_run(store, loss, fold, seed, dict(zip(qids, values)), relevant, data=data,
                          experiment=experiment)
