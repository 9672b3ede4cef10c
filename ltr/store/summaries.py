"""The ``step_series`` summary rows kept by the write path: newly logged steps folded in, a series
rebuilt from its rows after a truncation or a batch that replaced stored steps."""
from __future__ import annotations

import sqlite3
from typing import Sequence

from ltr.store.schema import STEP_SERIES_SELECT

def update_step_series(c: sqlite3.Connection, flat: Sequence[tuple[str, str, int, int, float | None]]) -> None:
    """Fold newly logged step rows ``(run_id, name, step, epoch, value)`` into their ``step_series``
    summaries, inside the caller's transaction. Rows after a series' last step (training going on)
    are added to it; a batch that re-logs a step already stored (or one step twice) replaces values,
    so those series are recomputed from their rows instead."""
    batches: dict[tuple[str, str], list[tuple[int, float | None]]] = {}
    for run_id, name, step, _epoch, value in flat:
        batches.setdefault((run_id, name), []).append((step, value))
    if not batches:
        return
    run_ids = sorted({r for r, _ in batches})
    known = {(r["run_id"], r["name"]): r for r in c.execute(
        f"SELECT * FROM step_series WHERE run_id IN ({','.join('?' * len(run_ids))})", run_ids)}
    upserts, recompute = [], []
    for key, rows in batches.items():
        steps = [step for step, _ in rows]
        old = known.get(key)
        if len(set(steps)) != len(steps) or (old is not None and min(steps) <= old["last_step"]):
            recompute.append(key)
            continue
        rows.sort()
        values = [v for _, v in rows if v is not None]
        new = {"n": len(rows), "first_step": rows[0][0], "first_value": rows[0][1], "last_step": rows[-1][0],
               "last_value": rows[-1][1], "negative": sum(v < 0 for v in values), "zero": sum(v == 0 for v in values),
               "positive": sum(v > 0 for v in values)}
        if old is not None:
            new.update(n=old["n"] + new["n"], first_step=old["first_step"], first_value=old["first_value"],
                       negative=old["negative"] + new["negative"], zero=old["zero"] + new["zero"],
                       positive=old["positive"] + new["positive"])
        upserts.append((*key, new["n"], new["first_step"], new["first_value"], new["last_step"], new["last_value"],
                        new["negative"], new["zero"], new["positive"]))
    c.executemany("INSERT OR REPLACE INTO step_series (run_id, name, n, first_step, first_value, last_step, "
                  "last_value, negative, zero, positive) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", upserts)
    if recompute:
        recompute_step_series(c, recompute)


def recompute_step_series(c: sqlite3.Connection, keys: Sequence[tuple[str, str | None]]) -> None:
    """Rebuild the ``step_series`` rows of ``(run_id, name)`` (name None: every series of the run) from
    their step rows (after a truncation, or a batch that replaced stored steps)."""
    for run_id, name in keys:
        where, args = ("run_id = ?", (run_id,)) if name is None else ("run_id = ? AND name = ?", (run_id, name))
        c.execute(f"DELETE FROM step_series WHERE {where}", args)
        c.execute("INSERT INTO step_series " + STEP_SERIES_SELECT.format(where=where), args)
