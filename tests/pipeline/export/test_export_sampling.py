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
