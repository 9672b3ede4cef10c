"""The Failure overlap page's Venn diagram: matplotlib-venn's area-proportional layout
(:mod:`pipeline.export.venn`, which also writes it as a file: :func:`venn_figure`, :func:`venn_png`) drawn
with plotly so that a click selects a region (:func:`venn_plotly`, :func:`region_from_selection`)."""
from __future__ import annotations

import html

import matplotlib.pyplot as plt
import plotly.graph_objects as go

from pipeline.export.venn import (REGION_IDS, TASK_LABELS, VENN_ORDER, draw_venn3, empty_sets,  # noqa: F401
                                  empty_sets_note, has_hard_queries, venn_figure, venn_png, venn_title)
from pipeline.sets.overlap import region_label as overlap_region_label

VENN_COLOURS = {"h2r": "#d62728", "h2g": "#2ca02c", "h2j": "#1f77b4"}


def venn_plotly(analysis: dict, selected: str | None = None, universe=None, *, texts: dict[str, str] | None = None,
                title: str | None = None) -> go.Figure:
    """The same diagram as :func:`venn_figure` (matplotlib-venn's layout: its region outlines and
    label positions), drawn with plotly so that a click inside a region selects it. Each region is a
    filled outline plus a grid of transparent points inside it (what a click hits); every point
    carries its region's key as ``customdata`` (:func:`region_from_selection`). ``texts``: each region's
    label in place of its count (the H2G sampling section's mean and range); ``title`` (lines apart by ``\n``) in
    place of the universe's lines."""
    import numpy as np

    fig_m, ax = plt.subplots(figsize=(5.5, 4.5))
    try:
        venn = draw_venn3(analysis, ax, texts)
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
        count = (texts or {}).get(region, analysis["regions"][region]["count"])
        count = str(count).replace("\n", " ")
        hover = html.escape(f"{region_label(region)}: {count} queries" + ("" if texts else " (click to list them)"))
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
                             text=[html.escape((texts or {}).get(r, str(analysis["regions"][r]["count"]))).replace(
                                 "\n", "<br>") for r in labels],
                             hoverinfo="skip",
                             textfont={"size": 11 if texts else 16}, showlegend=False))
    fig.add_trace(go.Scatter(x=[p[0] for _, p in set_labels], y=[p[1] for _, p in set_labels], mode="text",
                             text=[html.escape(t) for t, _ in set_labels], hoverinfo="skip",
                             textfont={"size": 12 if texts else 14}, showlegend=False))
    title = (html.escape(title).replace("\n", "<br>") if title is not None else
             "<br>".join(html.escape(line) for line in venn_title(analysis, universe)) + " · click a region")
    fig.update_layout(title=title,
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
    """The region's name in the one vocabulary of regions and intersections (:mod:`pipeline.sets.overlap`)."""
    return overlap_region_label(name)
