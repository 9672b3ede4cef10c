"""The BERTScore caches written by the code before the versioned migrations (main at 20028e0, the
designed study of ``tests/fixtures/old_stores/``) open with the current code: every pair F1 and
reference embedding reads back as before, and new entries are stored."""
from __future__ import annotations

import sqlite3

import numpy as np

from pipeline.generation.bertscore import PairCache
from pipeline.generation.embeddings import ReferenceEmbeddings
from tests.support.old_stores import copy_old_store, rows_as_before, versions


def _keys(path, table):
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute(f"SELECT key FROM {table} ORDER BY key")]
    finally:
        conn.close()


def test_old_bertscore_caches_read_back_identically_and_take_new_entries(tmp_path):
    import torch

    pairs_path = copy_old_store("bertscore.sqlite", tmp_path)
    pairs = PairCache(pairs_path)
    rows_as_before(pairs_path, "bertscore.sqlite")
    stored = pairs.get_many(_keys(pairs_path, "pair_f1"))
    assert len(stored) == 8 and all(0 < f1 <= 1 for f1 in stored.values())
    pairs.put_many({"new": 0.5})
    assert pairs.get_many(["new"]) == {"new": 0.5}

    refs_path = copy_old_store("bertscore_embeddings.sqlite", tmp_path)
    refs = ReferenceEmbeddings(refs_path)
    rows_as_before(refs_path, "bertscore_embeddings.sqlite")
    embedded = refs.get_many(_keys(refs_path, "reference_embedding"))
    assert len(embedded) == 8 and all(e.shape[1] == 384 and len(w) == e.shape[0] for e, w in embedded.values())
    refs.put_many({"new": (torch.ones(2, 3), torch.tensor([0.0, 1.0]))})
    emb, weights = refs.get_many(["new"])["new"]
    assert np.array_equal(emb.numpy(), np.ones((2, 3), np.float32)) and list(weights) == [0.0, 1.0]
    assert [(s, v) for s, v, _ in versions(pairs_path) + versions(refs_path)] == [("bertscore-pairs", 1),
                                                                                  ("bertscore-references", 1)]
