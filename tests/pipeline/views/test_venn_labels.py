"""The Venn diagram's labels (issue 30 item 12): every label lies inside the figure (they were cut at its
edges), an empty set is said to be empty instead of drawn as a stray label, and its share reads as a
reason, never "None". Real matplotlib-venn, rendered."""
from __future__ import annotations

import pytest

from pipeline.sets.overlap import overlap_analysis
from pipeline.views import failure_overlap as view

UNIVERSE = [f"q{i}" for i in range(20)]
# set labels at the left and right edges: before, "Hard to retrieve (5)" began at x = -3 px and
# "Hard to generate (2)" ended at 551 px of a 550 px wide figure
WIDE = {"h2r": ["q1", "q2", "q3", "q5", "q6"], "h2g": ["q3", "q4"], "h2j": ["q3", "q9"]}
EMPTY_H2J = {"h2r": ["q1", "q2", "q3"], "h2g": ["q3", "q4"], "h2j": []}


def _texts_outside(fig) -> list[str]:
    fig.canvas.draw()
    renderer, box = fig.canvas.get_renderer(), fig.bbox
    outside = []
    for text in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_window_extent")):
        if not text.get_visible() or not text.get_text():
            continue
        extent = text.get_window_extent(renderer)
        if extent.x0 < box.x0 or extent.x1 > box.x1 or extent.y0 < box.y0 or extent.y1 > box.y1:
            outside.append(text.get_text())
    return outside


@pytest.mark.parametrize("sets", [WIDE, EMPTY_H2J], ids=["wide", "empty-h2j"])
def test_every_label_of_the_exported_figure_lies_inside_it(sets):
    import matplotlib.pyplot as plt

    fig = view.venn_figure(overlap_analysis(sets, UNIVERSE))
    try:
        assert _texts_outside(fig) == []
    finally:
        plt.close(fig)


@pytest.mark.parametrize("sets", [WIDE, EMPTY_H2J], ids=["wide", "empty-h2j"])
def test_the_clickable_diagram_shows_every_label_inside_its_axes(sets):
    """The plotly diagram draws matplotlib-venn's label positions within matplotlib's limits: each label's
    rendered extent (from matplotlib, in data coordinates) lies within the plotly axes' ranges."""
    import matplotlib.pyplot as plt

    analysis = overlap_analysis(sets, UNIVERSE)
    fig = view.venn_plotly(analysis)
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    mfig, ax = plt.subplots(figsize=(5.5, 4.5))
    try:
        view.draw_venn3(analysis, ax)
        mfig.canvas.draw()
        to_data = ax.transData.inverted()
        for text in ax.texts:
            if text.get_text():
                (tx0, ty0), (tx1, ty1) = to_data.transform(text.get_window_extent().get_points())
                assert x0 <= tx0 and tx1 <= x1 and y0 <= ty0 and ty1 <= y1, text.get_text()
    finally:
        plt.close(mfig)
    shown = [t for trace in fig.data if trace.mode == "text" for t in trace.text]
    assert "Hard to retrieve (3)" in shown or "Hard to retrieve (5)" in shown


def test_an_empty_set_is_named_empty_not_drawn_and_its_share_is_a_reason():
    analysis = overlap_analysis(EMPTY_H2J, UNIVERSE)
    fig = view.venn_plotly(analysis)
    shown = [t for trace in fig.data if trace.mode == "text" for t in trace.text]
    assert "Hard to judge (0)" not in shown  # no circle, no stray label
    assert "Hard to judge: empty set (no query of the common universe), not drawn" in fig.layout.title.text
    summary = view.summary_frame(analysis).set_index("figure")["share"]
    assert summary["H2J exclusive share"] == "— (the H2J set is empty)"
    assert summary["H2R exclusive share"] == "66.7% (2 of 3)" and summary["hard in all three"] == "0.0% (0 of 20)"
    assert "None" not in view.summary_frame(analysis).to_string()


# issue 33: a 10-query study's sets of 3 each; matplotlib-venn put "Hard to retrieve (3)" over "Hard to
# generate (3)" (and "Hard to judge (3)" over both, depending on the sets)
SMALL_UNIVERSE = [f"q{i}" for i in range(10)]
SMALL = [{"h2r": ["q2", "q1", "q4"], "h2g": ["q1", "q7", "q8"], "h2j": ["q7", "q6", "q3"]},
         {"h2r": ["q1", "q7", "q0"], "h2g": ["q6", "q9", "q0"], "h2j": ["q7", "q4", "q3"]},
         {"h2r": ["q5", "q7", "q0"], "h2g": ["q7", "q0", "q4"], "h2j": ["q9", "q6", "q2"]}]


@pytest.mark.parametrize("sets", SMALL, ids=["chain", "star", "pair"])
def test_no_label_of_a_small_studys_venn_overlaps_another(sets):
    import matplotlib.pyplot as plt

    fig = view.venn_figure(overlap_analysis(sets, SMALL_UNIVERSE))
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        texts = [t for t in fig.axes[0].texts if t.get_visible() and t.get_text()]
        overlapping = [(a.get_text(), b.get_text()) for i, a in enumerate(texts) for b in texts[i + 1:]
                       if a.get_window_extent(renderer).overlaps(b.get_window_extent(renderer))]
        assert overlapping == []
        assert _texts_outside(fig) == []
    finally:
        plt.close(fig)
