"""Drawing an annotation sample: stratified by task (proportional allocation, largest remainder, at
least one per task that has items), in a seeded order; a per-annotator list gets a seed derived from
the annotator's name."""
from __future__ import annotations

import hashlib
import random
from typing import Sequence


def allocate(counts: dict[str, int], size: int) -> dict[str, int]:
    """Stratified allocation: proportional to ``counts``, largest remainder, at least one per
    non-empty stratum when ``size`` allows, never more than a stratum holds."""
    strata = {k: n for k, n in counts.items() if n > 0}
    total = sum(strata.values())
    size = min(size, total)
    if not strata or size <= 0:
        return {k: 0 for k in counts}
    exact = {k: size * n / total for k, n in strata.items()}
    out = {k: int(v) for k, v in exact.items()}
    if size >= len(strata):
        out = {k: max(v, 1) for k, v in out.items()}
    by_remainder = sorted(strata, key=lambda k: (-(exact[k] - int(exact[k])), k))
    while sum(out.values()) < size:
        for k in by_remainder:
            if sum(out.values()) < size and out[k] < strata[k]:
                out[k] += 1
    while sum(out.values()) > size:  # the "at least one" floor overshot: take from the largest
        k = max(out, key=lambda s: (out[s] - exact[s], s))
        out[k] -= 1
    return {k: out.get(k, 0) for k in counts}


def draw_sample(keys: Sequence[tuple[str, str, str]], size: int, seed: int) -> list[tuple[str, str, str]]:
    """``size`` item keys (dataset, task, qid) stratified by task, in a seeded shuffled order."""
    rng = random.Random(seed)
    by_task: dict[str, list] = {}
    for key in sorted(set(keys)):
        by_task.setdefault(key[1], []).append(key)
    quota = allocate({t: len(v) for t, v in by_task.items()}, size)
    chosen = [k for t, pool in sorted(by_task.items()) for k in rng.sample(pool, quota[t])]
    rng.shuffle(chosen)
    return chosen


def annotator_seed(seed: int, annotator: str) -> int:
    return int(hashlib.sha256(f"{seed}:{annotator}".encode()).hexdigest()[:8], 16)
