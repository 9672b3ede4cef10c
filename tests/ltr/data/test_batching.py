"""ListBatcher: complete evaluation batches, correct padding, bucketing, seeded slate sampling."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ltr.data.batching import ListBatcher
from ltr.data.letor import RankingDataset


def make_dataset(lengths, n_features=3, seed=0) -> RankingDataset:
    rng = np.random.default_rng(seed)
    ptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    n = int(ptr[-1])
    # feature 0 is the document's own row number, so every gathered row can be traced back
    features = np.c_[np.arange(n), rng.normal(size=(n, n_features - 1))].astype(np.float32)
    return RankingDataset(features=features, labels=rng.integers(0, 5, n).astype(np.float32), query_ptr=ptr,
                          qids=[f"q{i}" for i in range(len(lengths))], n_features=n_features)


LENGTHS = [5, 1, 12, 3, 3, 8, 30, 2, 7, 3, 19]


def rows_of(batch, i) -> np.ndarray:
    return batch.features[i, batch.mask[i], 0].long().numpy()


def test_eval_batches_cover_every_document_once_with_correct_padding():
    ds = make_dataset(LENGTHS)
    batcher = ListBatcher(ds, "cpu", batch_size=4)
    batches = list(batcher)
    assert len(batches) == len(batcher) == 3
    seen_rows, seen_queries = [], []
    for batch in batches:
        B, n, F = batch.features.shape
        assert batch.labels.shape == batch.mask.shape == (B, n) and batch.query_index.shape == (B,)
        assert batch.mask.dtype == torch.bool and batch.query_index.dtype == torch.long
        assert n == int(batch.mask.sum(1).max())  # padded to the batch's own longest list
        assert (batch.labels[~batch.mask] == -1).all() and (batch.features[~batch.mask] == 0).all()
        for i, q in enumerate(batch.query_index.tolist()):
            a, b = ds.query_ptr[q], ds.query_ptr[q + 1]
            rows = rows_of(batch, i)
            assert rows.tolist() == list(range(a, b))  # whole list, in document order
            assert batch.mask[i, :b - a].all()  # real documents first, then padding
            np.testing.assert_array_equal(batch.features[i, :b - a].numpy(), ds.features[a:b])
            np.testing.assert_array_equal(batch.labels[i, :b - a].numpy(), ds.labels[a:b])
            seen_rows += rows.tolist()
            seen_queries.append(q)
    assert sorted(seen_rows) == list(range(ds.n_documents))
    assert sorted(seen_queries) == list(range(len(LENGTHS)))
    widths = [b.features.shape[1] for b in batches]
    assert widths == sorted(widths) and widths[-1] == max(LENGTHS)  # bucketed by length


def test_slate_sampling_keeps_subsets_in_order_and_is_seeded():
    ds = make_dataset(LENGTHS)

    def epoch(batcher, e):
        batcher.set_epoch(e)
        return {q: rows_of(b, i).tolist() for b in batcher for i, q in enumerate(b.query_index.tolist())}

    batcher = ListBatcher(ds, "cpu", batch_size=3, slate_length=6, shuffle=True, seed=1)
    e0, e1 = epoch(batcher, 0), epoch(batcher, 1)
    assert sorted(e0) == sorted(e1) == list(range(len(LENGTHS)))  # every query once per epoch
    for q, rows in e0.items():
        a, b = ds.query_ptr[q], ds.query_ptr[q + 1]
        if b - a <= 6:
            assert rows == list(range(a, b))  # short lists are never cut
        else:
            assert len(rows) == 6 and rows == sorted(set(rows)) and a <= rows[0] and rows[-1] < b
    long = [q for q, n in enumerate(LENGTHS) if n > 6]
    assert any(e0[q] != e1[q] for q in long)  # resampled each epoch
    twin = ListBatcher(ds, "cpu", batch_size=3, slate_length=6, shuffle=True, seed=1)
    assert epoch(twin, 1) == e1 and epoch(twin, 0) == e0  # same seed and epoch, same sample
    other = ListBatcher(ds, "cpu", batch_size=3, slate_length=6, shuffle=True, seed=2)
    assert any(epoch(other, 0)[q] != e0[q] for q in long)


def test_shuffle_changes_composition_and_order_between_epochs_only():
    ds = make_dataset([4] * 12 + [9] * 4)

    def order(batcher, e):
        batcher.set_epoch(e)
        return [b.query_index.tolist() for b in batcher]

    a = ListBatcher(ds, "cpu", batch_size=4, shuffle=True, seed=0)
    first, second = order(a, 0), order(a, 1)
    assert first != second and order(a, 0) == first
    assert sorted(sum(first, [])) == list(range(16))
    for batch in ListBatcher(ds, "cpu", batch_size=4, shuffle=True, seed=0):
        assert len(set(batch.mask.sum(1).tolist())) == 1  # equal lengths still bucket together


def test_rejects_empty_and_bad_arguments():
    ds = make_dataset([3, 2])
    with pytest.raises(ValueError, match="batch_size"):
        ListBatcher(ds, "cpu", batch_size=0)
    with pytest.raises(ValueError, match="slate_length"):
        ListBatcher(ds, "cpu", batch_size=2, slate_length=0)
    with pytest.raises(ValueError, match="no queries"):
        ListBatcher(ds.subset([]), "cpu", batch_size=2)


def test_reads_a_memory_mapped_cached_split(tmp_path):
    from ltr.data.cache import load_cached

    path = tmp_path / "f.txt"
    path.write_text("".join(f"{q % 3} qid:{q // 4} 1:{q} 2:0.5\n" for q in range(20)))
    ds = load_cached(path)
    batch = next(iter(ListBatcher(ds, "cpu", batch_size=10)))
    assert batch.features.shape == (5, 4, 2) and batch.features[:, :, 0].flatten().tolist() == list(range(20))
