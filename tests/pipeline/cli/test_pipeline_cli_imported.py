"""The data folder's answers are data, like its judgments (issue 42): ``pipeline run`` without ``--generator`` uses
each answers file with its size from models.tsv, ``coverage`` lists them, and running the same command again
returns the stored study."""
from __future__ import annotations

import json

import pytest

from tests.pipeline.cli.support import pipeline_cli
from tests.support.failure_fixture import write_data_folder


@pytest.fixture
def folder(tmp_path):
    return write_data_folder(tmp_path / "trec_dl")


def run_args(folder, *more):
    return ["run", "--dataset", "dl19", "--data", str(folder), "--retriever", "designed", "--judge", "designed-judge",
            "--setup", "graded", "--encoder", "minilm", "--json", *more]


def stored_ids(cache):
    out = pipeline_cli("studies", "--dataset", "dl19", "--json", env_cache=cache)
    assert out.returncode == 0, out.stderr
    return [s["id"] for s in json.loads(out.stdout)["studies"]]


def test_run_without_a_generator_uses_the_folders_answers_and_a_rerun_returns_the_same_study(folder, tmp_path,
                                                                                           monkeypatch):
    cache = tmp_path / "cache"
    first = pipeline_cli(*run_args(folder), env_cache=cache)
    assert first.returncode == 0, first.stderr
    study = json.loads(first.stdout)
    assert study["configuration"]["generators"] == ["designed-answers", "other-answers"]
    designed, other = (study["generators"][n]["provenance"] for n in ("designed-answers", "other-answers"))
    assert (designed["parameters_b"], designed["size_source"]) == (175.0, "models.tsv")
    assert designed["listed_size"]["source"] == "a paper's figure"
    assert "parameters_b" not in other and other["listed_size"]["parameters"] == "unknown"  # unknown stays unknown
    judge = study["judges"]["designed-judge"]["graded"]["info"]["provenance"]
    assert (judge["parameters_b"], judge["size_source"]) == (70.0, "models.tsv")
    gates = {label: c.get("gated") for label, c in study["configurations"].items()}
    assert gates == {"designed | designed-answers | designed-judge | graded": {},
                     "designed | other-answers | designed-judge | graded":
                         {"generator": "a model of unknown size (state it to count its output)"}}

    again = pipeline_cli(*run_args(folder), env_cache=cache)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["id"] == study["id"]
    assert f"the same as stored study {study['id']}" in again.stderr
    assert stored_ids(cache) == [study["id"]]  # no second entry

    # a dashboard job chooses its id: the run stores nothing new, and the job's row links to the stored study
    asked = "20991231T000000Z-00000000-abcd"
    job = pipeline_cli(*run_args(folder, "--study-id", asked), env_cache=cache)
    assert job.returncode == 0 and json.loads(job.stdout)["id"] == study["id"], job.stderr
    assert stored_ids(cache) == [study["id"]]
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(cache))
    from core.jobs import Job
    from pipeline.study.jobs import STUDY, study_link, written_study

    done = Job(id=1, label="study", command=[], resource="cpu", status="completed", created=0.0,
               meta={"kind": STUDY.name, "dataset": "dl19", "study_id": asked})
    assert written_study(done) == study_link("dl19", study["id"])


def test_a_stated_size_fills_an_unknown_one_and_a_contradiction_is_refused(folder, tmp_path):
    cache = tmp_path / "cache"
    stated = pipeline_cli(*run_args(folder, "--generator", "other-answers", "--model-size", "other-answers=8B"),
                          env_cache=cache)
    assert stated.returncode == 0, stated.stderr
    provenance = json.loads(stated.stdout)["generators"]["other-answers"]["provenance"]
    assert (provenance["parameters_b"], provenance["size_source"]) == (8.0, "stated by the user")

    refused = pipeline_cli(*run_args(folder, "--generator", "designed-answers", "--model-size",
                                     "designed-answers=7B"), env_cache=cache)
    assert refused.returncode == 2
    assert "--model-size designed-answers=7B contradicts the 175B (models.tsv)" in refused.stderr
    assert len(stored_ids(cache)) == 1  # the refused run stored nothing


def test_coverage_lists_the_imported_answers_with_their_sizes(folder, tmp_path):
    out = pipeline_cli("coverage", "--dataset", "dl19", "--data", str(folder), env_cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    assert "imported answers: designed-answers (175B, models.tsv), other-answers (size unknown, models.tsv)" in out.stdout
    assert "imported judgments: designed-judge (70B, models.tsv)" in out.stdout
    listed = json.loads(pipeline_cli("coverage", "--dataset", "dl19", "--data", str(folder), "--json",
                                     env_cache=tmp_path / "cache").stdout)["dl19"]
    assert set(listed["imported_answers"]) == {"designed-answers", "other-answers"}
    assert listed["model_sizes"]["other-answers"]["parameters"] == "unknown"
