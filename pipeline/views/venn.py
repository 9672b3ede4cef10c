"""The Failure overlap page's Venn diagram: matplotlib-venn's area-proportional layout, exported as a
PNG (:func:`venn_figure`, :func:`venn_png`) and drawn with plotly so that a click selects a region
(:func:`venn_plotly`, :func:`region_from_selection`). The layout's limits hold every label
(:func:`_venn3`), and an empty set is named in the title instead of drawn (:func:`empty_sets_note`)."""
from __future__ import annotations

import html
import logging

import matplotlib

matplotlib.use("Agg")  # the page renders figures to images; never open a window
import matplotlib.pyplot as plt  # noqa: E402
import plotly.graph_objects as go  # noqa: E402

from pipeline.sets.overlap import TASKS  # noqa: E402

TASK_LABELS = {"h2r": "Hard to retrieve", "h2g": "Hard to generate", "h2j": "Hard to judge"}
# matplotlib-venn's subset order for venn3: (Abc, aBc, ABc, abC, AbC, aBC, ABC) with A, B, C = h2r, h2g, h2j
VENN_ORDER = ("h2r", "h2g", "h2r&h2g", "h2j", "h2r&h2j", "h2g&h2j", "h2r&h2g&h2j")


def empty_sets(analysis: dict) -> list[str]:
    """The tasks whose set holds no query of the common universe (drawn as no circle)."""
    return [t for t in TASKS if not analysis["sizes"][t]]


def empty_sets_note(analysis: dict) -> str:
    """``Hard to judge: empty set (no query of the common universe), not drawn`` ("" when none is empty)."""
    empty = empty_sets(analysis)
    return (f"{', '.join(TASK_LABELS[t] for t in empty)}: empty set (no query of the common universe), not drawn"
            if empty else "")


def _venn3(analysis: dict, ax):
    """matplotlib-venn's diagram on ``ax``, its limits widened until every label lies inside them (the
    set labels sit outside the circles: at the default limits they were cut at the figure's edges). An
    empty set has no circle: its label is left out (:func:`empty_sets_note` says so)."""
    import warnings

    from matplotlib_venn import venn3

    counts = tuple(analysis["regions"][name]["count"] for name in VENN_ORDER)
    sizes = analysis["sizes"]
    with warnings.catch_warnings():  # "Circle C has zero area": an empty set, reported by empty_sets_note
        warnings.simplefilter("ignore", UserWarning)
        venn = venn3(subsets=counts, set_labels=[f"{TASK_LABELS[t]} ({sizes[t]})" if sizes[t] else ""
                                                 for t in TASKS], ax=ax)
    _fit_texts(ax)
    return venn


def _fit_texts(ax, pad: float = 0.04, rounds: int = 8) -> None:
    """Widen ``ax``'s limits to hold every visible text's extent (text keeps its size in pixels while the
    drawing shrinks, so a few rounds), plus ``pad`` of the span on each side."""
    # equal aspect by widening the limits, not by shrinking the axes box (a shrinking box makes the
    # labels ever wider in data units, and the widening would not converge)
    ax.set_aspect("equal", adjustable="datalim")
    axes_log = logging.getLogger("matplotlib.axes._base")  # "Ignoring fixed x limits ...": what datalim means
    level = axes_log.level
    axes_log.setLevel(logging.ERROR)
    try:
        _widen_to_texts(ax, pad, rounds)
    finally:
        axes_log.setLevel(level)


def _widen_to_texts(ax, pad: float, rounds: int) -> None:
    fig = ax.figure
    for _ in range(rounds):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        to_data = ax.transData.inverted()
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        # a text within half a pad of an edge counts as outside: the limits keep a margin that absorbs
        # the small shifts of a redraw (equal aspect) and of plotly's own text rendering
        mx, my = (x1 - x0) * pad / 2, (y1 - y0) * pad / 2
        grown = False
        for text in ax.texts:
            if not text.get_visible() or not text.get_text():
                continue
            (tx0, ty0), (tx1, ty1) = to_data.transform(text.get_window_extent(renderer).get_points())
            if tx0 < x0 + mx or tx1 > x1 - mx or ty0 < y0 + my or ty1 > y1 - my:
                grown = True
                x0, x1, y0, y1 = min(x0, tx0), max(x1, tx1), min(y0, ty0), max(y1, ty1)
        if not grown:
            return
        dx, dy = (x1 - x0) * pad, (y1 - y0) * pad
        ax.set_xlim(x0 - dx, x1 + dx)
        ax.set_ylim(y0 - dy, y1 + dy)


def has_hard_queries(analysis: dict) -> bool:
    return any(analysis["regions"][name]["count"] for name in VENN_ORDER)


def venn_figure(analysis: dict, universe=None):
    """The area-proportional three-way Venn diagram (matplotlib-venn) of one configuration: the export
    (``universe``: the configuration's :class:`pipeline.study.universe.UniverseSummary`, for the title)."""
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    if not has_hard_queries(analysis):
        ax.text(0.5, 0.5, "no hard queries", ha="center", va="center")
        ax.set_axis_off()
        return fig
    _venn3(analysis, ax)
    ax.set_title("\n".join(venn_title(analysis, universe)), fontsize=10)
    fig.tight_layout()
    return fig


def venn_png(analysis: dict, universe=None) -> bytes:
    import io

    fig = venn_figure(analysis, universe)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=150)
    plt.close(fig)
    return buffer.getvalue()


REGION_IDS = dict(zip(VENN_ORDER, ("100", "010", "110", "001", "101", "011", "111")))
VENN_COLOURS = {"h2r": "#d62728", "h2g": "#2ca02c", "h2j": "#1f77b4"}


def venn_plotly(analysis: dict, selected: str | None = None, universe=None) -> go.Figure:
    """The same diagram as :func:`venn_figure` (matplotlib-venn's layout: its region outlines and
    label positions), drawn with plotly so that a click inside a region selects it. Each region is a
    filled outline plus a grid of transparent points inside it (what a click hits); every point
    carries its region's key as ``customdata`` (:func:`region_from_selection`)."""
    import numpy as np

    fig_m, ax = plt.subplots(figsize=(5.5, 4.5))
    try:
        venn = _venn3(analysis, ax)
        xlim, ylim = ax.get_xlim(), ax.get_ylim()
        outlines, labels = {}, {}
        for region, rid in REGION_IDS.items():
            patch, label = venn.get_patch_by_id(rid), venn.get_label_by_id(rid)
            if patch is not None:
                outlines[region] = patch.get_path()
            if label is not None:
                labels[region] = label.get_position()
        set_labels = [(t.get_text(), t.get_position()) for t in venn.set_labels if t is not None and t.get_text()]
    finally:
        plt.close(fig_m)
    xs = np.linspace(xlim[0], xlim[1], 90)
    ys = np.linspace(ylim[0], ylim[1], 75)
    grid = np.array([(x, y) for x in xs for y in ys])
    fig = go.Figure()
    for region, path in outlines.items():
        members = region.split("&")
        colour = VENN_COLOURS[members[0]] if len(members) == 1 else "#8c6d31" if len(members) == 2 else "#555555"
        count = analysis["regions"][region]["count"]
        hover = html.escape(f"{region_label(region)}: {count} queries (click to list them)")
        for polygon in [_outline(path)]:
            fig.add_trace(go.Scatter(x=polygon[:, 0], y=polygon[:, 1], fill="toself", mode="lines",
                                     line={"color": "#333" if region == selected else "#999",
                                           "width": 3 if region == selected else 1},
                                     fillcolor=colour, opacity=0.55 if region == selected else 0.3,
                                     hoverinfo="skip", showlegend=False))
        inside = grid[path.contains_points(grid)]
        if len(inside) == 0 and region in labels:
            inside = np.array([labels[region]])
        fig.add_trace(go.Scatter(x=inside[:, 0], y=inside[:, 1], mode="markers", marker={"size": 6, "opacity": 0},
                                 customdata=[region] * len(inside), hovertext=[hover] * len(inside),
                                 hoverinfo="text", showlegend=False, name=region))
    fig.add_trace(go.Scatter(x=[labels[r][0] for r in labels], y=[labels[r][1] for r in labels], mode="text",
                             text=[str(analysis["regions"][r]["count"]) for r in labels], hoverinfo="skip",
                             textfont={"size": 16}, showlegend=False))
    fig.add_trace(go.Scatter(x=[p[0] for _, p in set_labels], y=[p[1] for _, p in set_labels], mode="text",
                             text=[html.escape(t) for t, _ in set_labels], hoverinfo="skip", textfont={"size": 14},
                             showlegend=False))
    title = "<br>".join(html.escape(line) for line in venn_title(analysis, universe))
    fig.update_layout(title=f"{title} · click a region",
                      xaxis={"visible": False, "range": list(xlim), "fixedrange": True},
                      yaxis={"visible": False, "range": list(ylim), "scaleanchor": "x", "fixedrange": True},
                      height=480, margin={"l": 10, "r": 10, "t": 80, "b": 10}, clickmode="event+select",
                      dragmode=False, plot_bgcolor="white")
    return fig


def _outline(path, steps: int = 16):
    """A region's outline as points: matplotlib-venn draws arcs as Bézier curves, sampled here."""
    import numpy as np

    points = [segment.point_at_t(t) for segment, _ in path.iter_bezier()
              for t in np.linspace(0.0, 1.0, steps)]
    return np.array(points)


def region_from_selection(selection) -> str | None:
    """The Venn region a click selected (from ``st.plotly_chart(on_select=...)``'s selection), or None."""
    points = (selection or {}).get("points", []) if isinstance(selection, dict) else getattr(selection, "points", [])
    for point in points or []:
        data = point.get("customdata")
        data = data[0] if isinstance(data, (list, tuple)) and data else data
        if data in VENN_ORDER:
            return data
    return None


def region_label(name: str) -> str:
    members = name.split("&")
    if len(members) == 1:
        return f"{members[0].upper()} only"
    if len(members) == 3:
        return "all three"
    return " ∩ ".join(m.upper() for m in members) + " only"


def venn_title(analysis: dict, universe=None) -> list[str]:
    """The diagram's title lines: ``4 of 10 judged queries scored by all three tasks``, ``H2R 10, H2G 4,
    H2J 10 scored · universe per-task`` (with ``universe``), and the empty sets' note."""
    if universe is None:
        lines = [f"{analysis['n_queries']} queries scored by all three tasks"]
    else:
        judged = f" of {universe.n_judged} judged" if universe.n_judged else ""
        sizes = ", ".join(f"{t.upper()} {n}" for t, n in universe.n_task.items())
        lines = [f"{analysis['n_queries']}{judged} queries scored by all three tasks",
                 f"{sizes} scored · universe {universe.rule}"]
    return lines + ([empty_sets_note(analysis)] if empty_sets(analysis) else [])
