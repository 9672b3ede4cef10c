"""LETOR data benchmark: parse speed of a 1-million-line file, cold and warm cached loads.

    python bench/bench_data.py [--lines 1000000] [--features 136] [--sparse] [--dir DIR]

The file (WEB10K-shaped: 136 raw features, grades 0-4, 100 documents per query) is generated once
into DIR (default: the system temp folder) and reused. It is dense (every line carries features
1..F, as in MSLR and MQ: read_letor's pandas fast path); ``--sparse`` omits about half of each
line's features (as in Yahoo: the scikit-learn path). The cache goes to a fresh temporary folder,
so the "cold" load really parses (it is removed afterwards). Prints plain numbers; not a test.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def make_file(path: Path, n_lines: int, n_features: int, sparse: bool) -> None:
    """Distinct feature rows for one block of 10k lines, repeated with fresh qids (fast to write)."""
    rng = np.random.default_rng(0)
    block = min(n_lines, 10_000)
    scale = 10.0 ** rng.uniform(0, 3, n_features)
    values = rng.gamma(1.0, 1.0, (block, n_features)) * scale
    if sparse:
        keep = rng.random((block, n_features)) < 0.5
        rows = [" ".join(f"{i + 1}:{v:.6g}" for i, v in zip(np.flatnonzero(k), r[k])) for r, k in zip(values, keep)]
    else:
        fmt = " ".join(f"{i + 1}:%.6g" for i in range(n_features))
        rows = [fmt % tuple(r) for r in values]
    labels = rng.choice(5, size=block, p=[0.52, 0.32, 0.13, 0.02, 0.01])
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        for start in range(0, n_lines, block):
            fh.write("".join(f"{labels[i]} qid:{(start + i) // 100} {rows[i]}\n"
                             for i in range(min(block, n_lines - start))))
    os.replace(tmp, path)


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--sparse", action="store_true", help="about half the features per line")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    path = args.dir / f"irdash-bench-letor-{args.lines}x{args.features}{'-sparse' if args.sparse else ''}.txt"
    if not path.is_file():
        t = time.perf_counter()
        make_file(path, args.lines, args.features, args.sparse)
        print(f"generated {path} in {time.perf_counter() - t:.1f} s")
    cache = tempfile.mkdtemp(prefix="irdash-bench-cache-")
    os.environ["IRDASH_CACHE_DIR"] = cache
    try:
        run(path, args)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def run(path: Path, args) -> None:
    from ltr.data.cache import load_cached
    from ltr.data.letor import query_minmax, read_letor

    size_mb = path.stat().st_size / 2**20
    print(f"file: {args.lines:,} lines, {args.features} features, {'sparse' if args.sparse else 'dense'}, "
          f"{size_mb:,.0f} MiB, {os.cpu_count()} CPUs")
    t, cpu = time.perf_counter(), _cpu_seconds()
    ds = read_letor(path, n_features=args.features)
    parse, cpu = time.perf_counter() - t, _cpu_seconds() - cpu
    print(f"read_letor: {parse:.1f} s = {args.lines / parse:,.0f} lines/s ({size_mb / parse:.0f} MiB/s); "
          f"{cpu:.0f} CPU-s over all processes = {args.lines / cpu:,.0f} lines per CPU-second "
          f"(wall speed scales with idle cores)")
    peak = [resource.getrusage(who).ru_maxrss / 2**20 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    print(f"  peak resident memory: {peak[0]:.1f} GiB in this process, {peak[1]:.1f} GiB in the largest worker")
    del ds
    t = time.perf_counter()
    load_cached(path, n_features=args.features)
    print(f"load_cached cold (hash + parse + write): {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    ds = load_cached(path, n_features=args.features)
    print(f"load_cached warm (memory-mapped): {time.perf_counter() - t:.3f} s")
    t = time.perf_counter()
    np.asarray(ds.features).sum()
    print(f"  first full read of the mapped features: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    query_minmax(ds.features, ds.query_ptr)
    print(f"query-level min-max normalisation: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
