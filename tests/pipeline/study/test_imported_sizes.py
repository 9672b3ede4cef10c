"""An imported model's size: the data folder's models.tsv, else the user's statement (pipeline.study.imported_sizes)."""
from __future__ import annotations

import pytest

from core.errors import DatasetError
from pipeline.data.imported import ListedSize
from pipeline.llm.base import Provenance
from pipeline.study.imported_sizes import SOURCE_LISTED, imported_record

RECORD = {"backend": "imported", "model": "m", "small": False, "note": "answers imported from f", "label": "imported:m"}


def listed(parameters: str) -> ListedSize:
    return ListedSize("m", parameters, "the model card", "/data/models.tsv")


def test_a_listed_size_is_the_size_with_its_source():
    out = imported_record(RECORD, listed("70B"), None)
    assert (out["parameters_b"], out["size_source"]) == (70.0, SOURCE_LISTED)
    assert out["listed_size"] == {"parameters": "70B", "source": "the model card", "file": "/data/models.tsv"}
    assert Provenance.from_dict(out).evidence_gate == ""  # a known size over 1B: its output may be a finding


def test_a_listed_sub_1b_model_is_marked_small():
    out = imported_record(RECORD, listed("0.78B"), None)
    assert out["small"] is True and out["label"].endswith("(sub-1B model: not a finding)")


def test_unknown_stays_unknown_unless_stated():
    out = imported_record(RECORD, listed("unknown"), None)
    assert "parameters_b" not in out and out["listed_size"]["parameters"] == "unknown"
    assert "unknown size" in Provenance.from_dict(out).evidence_gate
    stated = imported_record(RECORD, listed("unknown"), {"m": 8.0})
    assert (stated["parameters_b"], stated["size_source"]) == (8.0, "stated by the user")


def test_a_statement_agrees_with_a_listed_size_or_is_refused():
    assert imported_record(RECORD, listed("70B"), {"m": 70.0})["size_source"] == SOURCE_LISTED
    with pytest.raises(ValueError, match="--model-size m=7B contradicts the 70B"):
        imported_record(RECORD, listed("70B"), {"m": 7.0})


def test_without_a_row_the_size_is_the_statement_or_unknown():
    assert "parameters_b" not in imported_record(RECORD, None, None)
    assert imported_record(RECORD, None, {"m": 3.0})["parameters_b"] == 3.0


def test_a_listed_figure_that_is_no_size_names_the_file():
    with pytest.raises(DatasetError, match="/data/models.tsv: model m: expected a size"):
        imported_record(RECORD, listed("seventy"), None)
