"""A data folder's imported files found by name, and its models.tsv (pipeline.data.imported)."""
from __future__ import annotations

import pytest

from core.errors import DatasetError
from pipeline.data.datasets import load_dataset
from pipeline.data.imported import folder_files, folder_model_sizes, read_models_tsv
from tests.support.failure_fixture import write_data_folder


def test_each_kind_is_found_by_its_file_name(tmp_path):
    folder = write_data_folder(tmp_path / "trec_dl")
    (folder / "answers" / "samples.designed-answers.dl19.jsonl").write_text('{"qid": "q1", "sample": 0, "text": "x"}\n')
    (folder / "answers" / "answers.designed-answers.dl20.jsonl").write_text('{"qid": "q1", "text": "x"}\n')
    data = load_dataset("dl19", folder)
    assert list(data.folder_files("answers")) == ["designed-answers", "other-answers"]  # dl20's is not dl19's
    assert list(data.folder_files("samples")) == ["designed-answers"]
    assert list(data.folder_files("judgments")) == ["designed-judge"]
    assert data.imported_runs() == data.folder_files("runs") == {"designed": folder / "runs" / "run.designed.dl19.txt"}
    assert folder_files(None, "answers", "dl19") == {} and folder_files(tmp_path / "none", "runs", "dl19") == {}
    with pytest.raises(ValueError, match="unknown kind of imported file 'qrels'"):
        folder_files(folder, "qrels", "dl19")


def test_models_tsv_keeps_each_size_as_written_with_its_source(tmp_path):
    listed = folder_model_sizes(write_data_folder(tmp_path / "trec_dl"))
    assert (listed["designed-judge"].parameters, listed["designed-judge"].known) == ("70B", True)
    assert (listed["other-answers"].parameters, listed["other-answers"].known) == ("unknown", False)
    assert listed["other-answers"].source == "not published"
    assert folder_model_sizes(tmp_path) == {}  # no models.tsv: nothing listed


@pytest.mark.parametrize("text, message", [
    ("model\tsize\n", "expected the header"),
    ("name\tparameters\tsource\nm\t7B\n", ":2: expected three non-empty"),
    ("name\tparameters\tsource\nm\t\tcard\n", ":2: expected three non-empty"),
    ("name\tparameters\tsource\nm\t7B\tcard\nm\t8B\tcard\n", ":3: model 'm' is listed twice"),
])
def test_a_malformed_models_tsv_names_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "models.tsv"
    path.write_text(text)
    with pytest.raises(DatasetError, match=message) as err:
        read_models_tsv(path)
    assert str(path) in str(err.value)


def test_the_shared_models_tsv_lists_every_imported_model(shared_dir):
    folder = shared_dir / "data" / "trec_dl"
    listed = folder_model_sizes(folder)
    named = {m for kind in ("judgments", "answers", "samples") for ds in ("dl19", "dl20")
             for m in folder_files(folder, kind, ds)}
    assert named and named <= set(listed)
    assert not listed["gpt-4o-mini"].known and listed["llama-3.3-70b"].parameters == "70B"
