"""Plain helpers of the ltr tests (fixtures are in ``tests/ltr/conftest.py``)."""
from __future__ import annotations

import os
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
    """Torch on one thread inside the block, also as this process's ``core.threads`` choice (what
    ``train_run`` and NeuralLoss's pre-training apply); the count, the choice and the variable before
    are restored after.

    Tiny tensors train fastest on one thread, and torch's default of one OpenMP thread per core
    oversubscribes when the suite shares the 2 cores with other work (NeuralLoss's pre-training on
    torch's default: 12 min 44 s of CPU and unfinished after 15 min at load ~4; on one thread 2 min 51 s)."""
    from core.threads import TORCH_THREADS_ENV, forget_torch_choice, using_torch_threads

    variable = os.environ.get(TORCH_THREADS_ENV)
    os.environ[TORCH_THREADS_ENV] = "1"
    forget_torch_choice()
    try:
        with using_torch_threads(1):
            yield
    finally:
        if variable is None:
            os.environ.pop(TORCH_THREADS_ENV, None)
        else:
            os.environ[TORCH_THREADS_ENV] = variable
        forget_torch_choice()


def reproduction_script():
    """bench/learndcg_mq2008_reproduction.py as a module (a script, not a package: loaded from its file)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "learndcg_mq2008_reproduction.py"
    spec = importlib.util.spec_from_file_location("learndcg_mq2008_reproduction", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
