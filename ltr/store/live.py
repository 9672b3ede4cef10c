"""The live-chart cache of a run store: per series the grid points read so far, so a chart redrawn
every 2 s reads only the points logged since (:meth:`ltr.store.RunStore.live_step_points`)."""
from __future__ import annotations


class LiveSeries:
    """Per series: the grid points read so far (see :meth:`ltr.store.RunStore.live_step_series`)."""

    def __init__(self):
        self._series: dict[tuple[str, str], dict] = {}

    def read(self, store, run_id: str, name: str, max_points: int) -> list[tuple[int, int, float]]:
        span = store.step_range(run_id, name)
        if span is None:
            self._series.pop((run_id, name), None)
            return []
        lo, hi = span
        stride = max(1, -(-(hi - lo + 1) // max(max_points, 2)))  # ceil: at most max_points grid points
        known = self._series.get((run_id, name))
        if known is None or known["stride"] != stride or known["lo"] != lo or hi < known["hi"]:
            known = {"stride": stride, "lo": lo, "hi": lo - 1, "next": lo, "points": []}
            self._series[(run_id, name)] = known
        if known["next"] <= hi:
            new = store.step_points(run_id, name, known["next"], hi, stride)
            seen = known["points"][-1][0] if known["points"] else None
            known["points"].extend(p for p in new if p[0] != seen)
            known["next"] += stride * ((hi - known["next"]) // stride + 1)
        known["hi"] = hi
        points = known["points"]
        if points and points[-1][0] == hi:
            return list(points)
        tail = store.step_points(run_id, name, hi, hi, 1)
        # The last logged row always shows; a grid point is dropped to keep at most max_points.
        return points[: max_points - 1] + tail if len(points) >= max_points else points + tail
