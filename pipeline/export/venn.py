"""The matplotlib Venn diagram of one configuration: the file a paper uses (SVG with its text kept as text,
PDF, PNG) and the layout the page's clickable plotly diagram draws (:mod:`pipeline.views.venn`).

matplotlib-venn's area-proportional layout with limits widened until every label lies inside them
(:func:`draw_venn3`), an empty set named in the title instead of drawn (:func:`empty_sets_note`);
``caption`` lines (the configuration: dataset, retriever, generator, judge, setup) go under the title.
"""
from __future__ import annotations

import logging

import matplotlib

matplotlib.use("Agg")  # figures are rendered to files; never open a window
import matplotlib.pyplot as plt  # noqa: E402

from pipeline.sets.overlap import TASKS  # noqa: E402

TASK_LABELS = {"h2r": "Hard to retrieve", "h2g": "Hard to generate", "h2j": "Hard to judge"}
# matplotlib-venn's subset order for venn3: (Abc, aBc, ABc, abC, AbC, aBC, ABC) with A, B, C = h2r, h2g, h2j
VENN_ORDER = ("h2r", "h2g", "h2r&h2g", "h2j", "h2r&h2j", "h2g&h2j", "h2r&h2g&h2j")
REGION_IDS = dict(zip(VENN_ORDER, ("100", "010", "110", "001", "101", "011", "111")))  # matplotlib-venn's ids


def empty_sets(analysis: dict) -> list[str]:
    """The tasks whose set holds no query of the common universe (drawn as no circle)."""
    return [t for t in TASKS if not analysis["sizes"][t]]


def empty_sets_note(analysis: dict) -> str:
    """``Hard to judge: empty set (no query of the common universe), not drawn`` ("" when none is empty)."""
    empty = empty_sets(analysis)
    return (f"{', '.join(TASK_LABELS[t] for t in empty)}: empty set (no query of the common universe), not drawn"
            if empty else "")


def draw_venn3(analysis: dict, ax, texts: dict[str, str] | None = None):
    """matplotlib-venn's diagram on ``ax``, its limits widened until every label lies inside them (the
    set labels sit outside the circles: at the default limits they were cut at the figure's edges). An
    empty set has no circle: its label is left out (:func:`empty_sets_note` says so). ``texts``: each
    region's label in place of its count, set before the limits are fitted."""
    import warnings

    from matplotlib_venn import venn3

    counts = tuple(analysis["regions"][name]["count"] for name in VENN_ORDER)
    sizes = analysis["sizes"]
    with warnings.catch_warnings():  # "Circle C has zero area": an empty set, reported by empty_sets_note
        warnings.simplefilter("ignore", UserWarning)
        venn = venn3(subsets=counts, set_labels=[f"{TASK_LABELS[t]} ({sizes[t]:g})" if sizes[t] else ""
                                                 for t in TASKS], ax=ax)
    for region, text in (texts or {}).items():
        label = venn.get_label_by_id(REGION_IDS[region])
        if label is not None:
            label.set_text(text)
            label.set_fontsize("x-small")
    for label in (venn.set_labels or []) if texts else []:  # smaller set labels leave the circles more room
        if label is not None:
            label.set_fontsize("small")
    axes_log = logging.getLogger("matplotlib.axes._base")  # "Ignoring fixed x limits ...": see _fit_texts
    level = axes_log.level
    axes_log.setLevel(logging.ERROR)
    try:
        for _ in range(6):  # widening the limits shrinks the drawing under the texts: separate again
            _fit_texts(ax)
            if not _separate_set_labels(ax, venn):
                break
    finally:
        axes_log.setLevel(level)
    _fit_texts(ax)  # a draw with equal aspect moves the limits: the last word is the fit's
    return venn


def _overlapping(label, texts, renderer, pad: float = 2.0) -> bool:
    box = label.get_window_extent(renderer).padded(pad)
    return any(box.overlaps(t.get_window_extent(renderer)) for t in texts if t is not label)


def _separate_set_labels(ax, venn, rounds: int = 60, step: float = 0.03) -> bool:
    """Move each set label that overlaps another text outward from the diagram's centre (a step of
    ``step`` of the axes' height a round) until no text overlaps it (True when one moved): with small circles matplotlib-venn
    puts "Hard to retrieve (3)" over "Hard to generate (3)" (a 10-query study). Labels of coinciding
    circles, with no outward direction, move apart vertically."""
    import numpy as np

    labels = [t for t in (venn.set_labels or []) if t is not None and t.get_visible() and t.get_text()]
    texts = [t for t in ax.texts if t.get_visible() and t.get_text()]
    if not labels:
        return False
    centre = np.mean([t.get_position() for t in texts], axis=0)
    fig = ax.figure
    moved = False
    for _ in range(rounds):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        crowded = [label for label in labels if _overlapping(label, texts, renderer)]
        if not crowded:
            return moved
        moved = True
        (y0, y1) = ax.get_ylim()
        for i, label in enumerate(crowded):
            position = np.asarray(label.get_position(), dtype=float)
            direction = position - centre
            norm = float(np.hypot(*direction))
            direction = direction / norm if norm > 1e-9 else np.array([0.0, 1.0 if i % 2 == 0 else -1.0])
            label.set_position(tuple(position + direction * step * (y1 - y0)))
    return moved


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


def venn_figure(analysis: dict, universe=None, caption: list[str] | None = None, title: str | None = None,
                texts: dict[str, str] | None = None):
    """The area-proportional three-way Venn diagram (matplotlib-venn) of one configuration. ``title``: the
    export's one-line title (the configuration and universe go in its caption file); without it, the
    page's title lines (``caption`` lines, then :func:`venn_title` of ``universe``). An empty set's note
    is always shown: it says what is not drawn. ``texts``: each region's label in place of its count
    (the H2G sampling spread's mean and range)."""
    lines = [title] if title is not None else list(caption or [])
    fig, ax = plt.subplots(figsize=(5.5, 4.5 + 0.25 * len(lines)))
    if not has_hard_queries(analysis):
        ax.text(0.5, 0.5, "no hard queries", ha="center", va="center")
        ax.set_axis_off()
        if lines:
            ax.set_title("\n".join(lines), fontsize=10)
        return fig
    draw_venn3(analysis, ax, texts)
    notes = [empty_sets_note(analysis)] if empty_sets(analysis) else []
    lines = [*lines, *notes] if title is not None else [*lines, *venn_title(analysis, universe)]
    ax.set_title("\n".join(lines), fontsize=10)
    fig.tight_layout()
    return fig


def venn_png(analysis: dict, universe=None, caption: list[str] | None = None) -> bytes:
    import io

    fig = venn_figure(analysis, universe, caption)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=150)
    plt.close(fig)
    return buffer.getvalue()


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
