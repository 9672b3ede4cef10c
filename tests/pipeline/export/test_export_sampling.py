"""The H2G sampling-noise part of a study's export (``pipeline.export.sampling``) from the designed collection's
study and sampling result (tests/support/failure_fixture.py): per-query probabilities, the Jaccard table, the
Venn with H2G redrawn per sample and its table per shared configuration; a line in the manifest without a result."""
from __future__ import annotations

import csv

import pytest

from core.export import Export
from pipeline.export.sampling import export_sampling
from pipeline.study.result import StudyResult
from tests.support.failure_fixture import run_designed_study
from tests.support.sampling_fixture import run_designed_sampling
from tests.support.latex import PDFLATEX, compile_tex

@pytest.fixture
def designed(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    return StudyResult.from_dict(run_designed_study(tmp_path / "study"))


def test_no_stored_result_is_a_line_in_the_manifest(designed, tmp_path):
    export = Export(tmp_path / "out", {})
    export_sampling(export, designed)
    assert export.files == [] and export.not_written[0]["what"] == "H2G sampling noise"
    assert "python -m pipeline h2g-samples --dataset designed" in export.not_written[0]["reason"]


def test_the_part_of_a_stored_result(designed, tmp_path):
    result = run_designed_sampling(tmp_path / "samples")
    out = tmp_path / "out"
    export = Export(out, {})
    export_sampling(export, designed)
    written = {f["file"] for f in export.files}
    assert {"h2g-samples-queries.csv", "h2g-samples-jaccard.csv"} <= written
    venns = sorted(n for n in written if n.startswith("h2g-samples-venn-") and n.endswith(".png"))
    assert len(venns) == 2  # the study's binary and graded configurations, both in the result
    with open(out / "h2g-samples-queries.csv", newline="") as fh:
        rows = {r["qid"]: r for r in csv.DictReader(fh)}
    assert float(rows["q8"]["p_h2g"]) == 1.0 and rows["q6"]["hard_in"] == "2"
    with open(out / "h2g-samples-jaccard.csv", newline="") as fh:
        jaccard = list(csv.DictReader(fh))
    assert len(jaccard) == 3 + 3  # three pairs of samples, the other generator against each sample
    assert all(f.get("h2g_samples_id") == result["id"] for f in export.files)
    assert not export.not_written
    export.write_manifest()
    if not PDFLATEX:
        pytest.skip("pdflatex not installed: the .tex files were not compiled")
    assert compile_tex(out, "preview.tex").overfull(10) == []


def test_the_spread_venn_labels_neither_overlap_nor_leave_the_figure():
    """DL19's BM25 | Llama-3.3-70B | binary with H2G redrawn over text-davinci-003's 8 samples: two-line region
    labels (mean, range) around a small centre. With the set labels at their full size the drawing shrank until
    the labels of H2G ∩ H2J and of all three overlapped (rendered, real matplotlib-venn)."""
    import matplotlib.pyplot as plt

    from pipeline.export.sampling import region_texts, spread_analysis
    from pipeline.export.venn import VENN_ORDER, venn_figure

    spread = dict(zip(VENN_ORDER, ((3.5, 2, 5), (4.875, 3, 6), (4.5, 3, 6), (6.625, 5, 7), (2.75, 2, 3),
                                   (1.375, 1, 3), (0.25, 0, 1))))
    configuration = {"per_sample": [{"n_queries": 43}],
                     "distribution": {"regions": {k: {"n": 8, "mean": m, "min": lo, "max": hi}
                                                  for k, (m, lo, hi) in spread.items()},
                                      "sizes": {t: {"n": 8, "mean": 11.0, "min": 11, "max": 11}
                                                for t in ("h2r", "h2g", "h2j")}}}
    fig = venn_figure(spread_analysis(configuration), title="spread", texts=region_texts(configuration))
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        texts = [t for t in fig.axes[0].texts if t.get_visible() and t.get_text()]
        boxes = {t.get_text(): t.get_window_extent(renderer) for t in texts}
        assert "0.2\n(0–1)" in boxes and "1.4\n(1–3)" in boxes
        crossing = [(a, b) for i, (a, box) in enumerate(boxes.items()) for b, other in list(boxes.items())[i + 1:]
                    if box.overlaps(other)]
        assert crossing == []
        assert all(fig.bbox.x0 <= b.x0 and b.x1 <= fig.bbox.x1 and fig.bbox.y0 <= b.y0 and b.y1 <= fig.bbox.y1
                   for b in boxes.values())
    finally:
        plt.close(fig)
