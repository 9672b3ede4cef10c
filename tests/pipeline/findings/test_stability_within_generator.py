"""``structure_stable`` sets a change of generator against one generator's sampling spread (issue 42): on the
designed collection (tests/support/failure_fixture.py, real MiniLM), the study's two generators are the
designed answers (H2G {q6, q8}) and another model's (H2G {q7, q8}); |H2R ∩ H2G| goes from 1 to 2 of 8, while
the designed answers' three samples (tests/support/sampling_fixture.py) keep it at 1: the change exceeds the
sampling spread. Without a stored sampling result the finding says so."""
from __future__ import annotations

import pytest

from pipeline.findings.registry import check_findings
from pipeline.study.config import StudyConfig
from pipeline.study.run import run_study
from pipeline.study.sampling import sampling_spread
from tests.support.failure_fixture import write_collection
from tests.support.sampling_fixture import write_samples


@pytest.fixture
def designed(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = {**write_collection(tmp_path / "designed"), **write_samples(tmp_path / "designed")}
    collection = {"dataset": "designed", "qrels": files["qrels.txt"], "topics": files["topics.tsv"],
                  "passages": files["passages.tsv"], "encoder": "minilm", "setups": ("binary",),
                  "retrievers": (f"designed-run={files['run.txt']}",),
                  "judges": (f"designed-judge={files['judge.txt']}",)}
    study = run_study(StudyConfig(**collection, generators=(f"designed-answers={files['answers.jsonl']}",
                                                            f"other={files['other.jsonl']}")),
                      log=lambda m: None, progress=False)
    return files, collection, study


def _generator_part(study):
    (found,) = [f for f in check_findings("designed", study_id=study.id) if f.name == "structure_stable"]
    (part,) = [p for p in found.parts if p.measured.get("differs_in") == "generator"]
    return part


def test_a_change_of_generator_beside_the_sampling_spread(designed):
    files, collection, study = designed
    part = _generator_part(study)
    assert part.evidence["within_generator"] is None
    assert "no stored H2G sampling result of either generator" in part.reason
    sampling_spread(StudyConfig(**collection, generators=(f"other={files['other.jsonl']}",)),
                    f"designed-answers={files['samples.jsonl']}", log=lambda m: None)
    part = _generator_part(study)
    within = part.evidence["within_generator"]
    assert within["generator"] == "designed-answers" and within["n_samples"] == 3
    assert within["pairs"]["h2r&h2g"] == {"change": pytest.approx(1 / 8), "within_min": 1 / 8, "within_max": 1 / 8,
                                          "within_range": 0.0, "exceeds": True}
    assert within["exceeds"] and within["h2g_jaccard"]["exceeds_within"] is False
    assert "share changes exceed their range across 3 samples of designed-answers" in part.reason
