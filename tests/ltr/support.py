"""Plain helpers of the ltr tests (fixtures are in ``tests/ltr/conftest.py``)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TINY_QUERIES = 60  # per split of the tiny data set: enough batches per epoch to kill a run mid-epoch


def split_letor_by_query(source: Path, out: Path, n_folds: int = 5) -> Path:
    """Fold k: test = query group k, vali = group k+1, train = the rest (LETOR's rotation)."""
    lines = source.read_text().splitlines(keepends=True)
    qids = [line.split()[1] for line in lines]
    order = list(dict.fromkeys(qids))
    group = {q: i % n_folds for i, q in enumerate(order)}
    for k in range(n_folds):
        fold = out / f"Fold{k + 1}"
        fold.mkdir(parents=True)
        role = {k: "test", (k + 1) % n_folds: "vali"}
        parts = {"train": [], "vali": [], "test": []}
        for line, q in zip(lines, qids):
            parts[role.get(group[q], "train")].append(line)
        for split, chunk in parts.items():
            (fold / f"{split}.txt").write_text("".join(chunk))
    return out


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Torch on one thread inside the block (the count before is restored after).

    For work a test does outside ``train_run`` (which applies ``core.threads`` itself): torch's default
    of one OpenMP thread per core oversubscribes when the suite shares the 2 cores with other work
    (NeuralLoss's pre-training measured 632 s at load ~8 against 169 s on one thread at load ~2)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
