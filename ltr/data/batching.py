"""Padded list batches gathered from a split that lives on the device.

The split is one flat ``[N+1, F]`` feature tensor and ``[N+1]`` label tensor on the device; row N
is the padding row (features 0, label -1). A batch is an index matrix ``[B, n]`` into those rows,
so producing it is a single gather, with no host work per query.

Bucketing: queries are sorted by (effective) list length and chunked into batches of
``batch_size`` queries, so a batch is padded only to its own longest list. When shuffling, ties in
length are broken at random (so batch composition changes between epochs) and the batch order is
permuted.

Slate sampling: with ``slate_length``, a list longer than it keeps a random subset of
``slate_length`` documents (in their original order), drawn anew each epoch: one random key per
document, a lexsort by (query, key), and the first ``slate_length`` ranks of each query kept, all
vectorised. Evaluation uses ``slate_length=None`` and never drops a document.

All randomness comes from ``numpy.random.default_rng([seed, epoch])``: the same seed and epoch
give the same batches on every device, which is what resuming a run from a checkpoint needs.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np
import torch

from ltr.data.letor import RankingDataset


class ListBatch(NamedTuple):
    features: torch.Tensor  # float32 [B, n, F]; padding rows are 0
    labels: torch.Tensor  # float32 [B, n]; padding -1
    mask: torch.Tensor  # bool [B, n]; True = real document
    query_index: torch.Tensor  # long [B]; the query's index in the dataset


class ListBatcher:
    """Iterate a :class:`RankingDataset` as :class:`ListBatch` es on ``device``.

    Call :meth:`set_epoch` before iterating each training epoch (sampling and shuffling are
    seeded by ``(seed, epoch)``). Without ``shuffle`` and ``slate_length`` the batches are fixed,
    built once, and cover every document exactly once.
    """

    def __init__(self, ds: RankingDataset, device: str | torch.device, batch_size: int,
                 slate_length: int | None = None, shuffle: bool = False, seed: int = 0):
        if ds.n_queries == 0:
            raise ValueError("ListBatcher: the dataset has no queries")
        if batch_size < 1:
            raise ValueError(f"ListBatcher: batch_size must be >= 1, got {batch_size}")
        if slate_length is not None and slate_length < 1:
            raise ValueError(f"ListBatcher: slate_length must be >= 1 or None, got {slate_length}")
        self.device = torch.device(device)
        self.batch_size, self.slate_length = int(batch_size), slate_length
        self.shuffle, self.seed, self.epoch = shuffle, int(seed), 0
        n, f = ds.n_documents, ds.n_features
        self.pad_row = n
        features = np.zeros((n + 1, f), dtype=np.float32)
        features[:n] = ds.features
        labels = np.full(n + 1, -1.0, dtype=np.float32)
        labels[:n] = ds.labels
        self.features = torch.from_numpy(features).to(self.device)
        self.labels = torch.from_numpy(labels).to(self.device)
        self._ptr = np.asarray(ds.query_ptr, dtype=np.int64)
        self._lengths = np.diff(self._ptr)
        self._needs_sampling = slate_length is not None and int(self._lengths.max()) > slate_length
        self._fixed = None if (shuffle or self._needs_sampling) else self._build(epoch=0)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return -(-len(self._lengths) // self.batch_size)

    def __iter__(self) -> Iterator[ListBatch]:
        index, order, widths, batch_order = self._fixed or self._build(self.epoch)
        for b in batch_order:
            rows = slice(b * self.batch_size, (b + 1) * self.batch_size)
            idx = index[rows, :widths[b]]
            yield ListBatch(self.features[idx], self.labels[idx], idx != self.pad_row, order[rows])

    def _build(self, epoch: int):
        """Per-epoch index matrix ``[Q, L]`` (rows sorted by length), query order, batch widths."""
        rng = np.random.default_rng([self.seed, epoch])
        lengths, ptr = self._lengths, self._ptr
        if self._needs_sampling:
            n = int(ptr[-1])
            doc_query = np.repeat(np.arange(len(lengths)), lengths)
            by_key = np.lexsort((rng.random(n), doc_query))  # grouped by query, random within
            rank = np.arange(n) - np.repeat(ptr[:-1], lengths)
            docs = np.sort(by_key[rank < self.slate_length])  # back to document order
            lengths = np.minimum(lengths, self.slate_length)
            ptr = np.r_[0, np.cumsum(lengths)]
        else:
            docs = np.arange(int(ptr[-1]))
        if self.shuffle:
            order = np.lexsort((rng.random(len(lengths)), lengths))
        else:
            order = np.argsort(lengths, kind="stable")
        sorted_len = lengths[order]
        pos = np.arange(int(sorted_len[-1]))
        real = pos < sorted_len[:, None]
        index = np.where(real, docs[np.minimum(ptr[order, None] + pos, len(docs) - 1)], self.pad_row)
        n_batches = len(self)
        last = np.minimum((np.arange(n_batches) + 1) * self.batch_size, len(order)) - 1
        widths = sorted_len[last].tolist()  # rows are sorted, so a batch's last list is its longest
        batch_order = rng.permutation(n_batches) if self.shuffle else np.arange(n_batches)
        return (torch.from_numpy(index).to(self.device), torch.from_numpy(order).to(self.device),
                widths, batch_order.tolist())
