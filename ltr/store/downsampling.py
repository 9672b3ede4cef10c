"""Series downsampled in SQL: the first logged row at or after each point of an even grid of steps,
found by index seeks (so a read does not grow with the series' length), and the frames they make."""
from __future__ import annotations

import numpy as np
import pandas as pd

# The first row at or after each of ?1 evenly spaced steps from ?2 to ?3 (both ends included).
SPREAD_SQL = """
WITH RECURSIVE grid(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM grid WHERE i + 1 < ?1)
SELECT DISTINCT m.step, m.epoch, m.value FROM grid JOIN step_metrics m
  ON m.run_id = ?4 AND m.name = ?5 AND m.step = (
     SELECT s.step FROM step_metrics s WHERE s.run_id = ?4 AND s.name = ?5
       AND s.step >= CAST(ROUND(?2 + grid.i * (?3 - ?2) * 1.0 / (?1 - 1)) AS INTEGER) ORDER BY s.step LIMIT 1)
ORDER BY m.step
"""
# The first row at or after each of ?1, ?1 + ?2, ... <= ?3.
STRIDE_SQL = """
WITH RECURSIVE grid(x) AS (SELECT ?1 UNION ALL SELECT x + ?2 FROM grid WHERE x + ?2 <= ?3)
SELECT DISTINCT m.step, m.epoch, m.value FROM grid JOIN step_metrics m
  ON m.run_id = ?4 AND m.name = ?5 AND m.step = (
     SELECT s.step FROM step_metrics s WHERE s.run_id = ?4 AND s.name = ?5 AND s.step >= grid.x
       ORDER BY s.step LIMIT 1)
ORDER BY m.step
"""


def series_frame(run_id: str, name: str, rows) -> pd.DataFrame:
    arr = rows if isinstance(rows, np.ndarray) else np.asarray([tuple(r) for r in rows], dtype=np.float64).reshape(-1, 3)
    return pd.DataFrame({"run_id": run_id, "name": name, "step": arr[:, 0].astype(np.int64),
                         "epoch": arr[:, 1].astype(np.int64), "value": arr[:, 2]})


def concat_series(frames: list[pd.DataFrame]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame(columns=["run_id", "name", "step", "epoch", "value"])
    return pd.concat(frames, ignore_index=True)
