"""A stated model size is checked against what the tool knows (issue 40 item 7): the table of published sizes
of well-known models, each with its source (``pipeline/llm/published_sizes.tsv``). Before, ``--model-size
flan-t5-large=70B`` was accepted, and with it a study of FLAN-T5-large's judgments read as a 70B model's."""
from __future__ import annotations

import csv

import pytest

from pipeline import cli
from pipeline.llm import sizes
from pipeline.llm.base import Provenance


def test_every_row_has_a_size_or_unknown_and_a_source():
    with open(sizes.PUBLISHED_FILE, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert rows and all(r["source"].strip() for r in rows)
    known = sizes.published_sizes()
    assert known["flan-t5-large"].parameters_b == 0.78 and "Chung et al. 2022" in known["flan-t5-large"].source
    assert known["llama-3.3-70b"].parameters_b == 70.0
    assert {k: known[k].parameters_b for k in ("qwen2.5-0.5b", "qwen2.5-7b", "qwen2.5-72b")} == {
        "qwen2.5-0.5b": 0.49, "qwen2.5-7b": 7.61, "qwen2.5-72b": 72.7}
    assert known["gpt-4o-mini"].parameters_b is None and "not published" in known["gpt-4o-mini"].source


@pytest.mark.parametrize("name, entry", [("google/flan-t5-large", "FLAN-T5-large"),
                                         ("meta-llama/Llama-3.3-70B-Instruct", "Llama-3.3-70B"),
                                         ("ollama:llama3.3:70b-instruct-q4_K_M", "Llama-3.3-70B"),
                                         ("qwen2.5:7b-instruct", "Qwen2.5-7B"), ("mistral:7b-instruct-v0.3", "Mistral-7B"),
                                         ("flan-t5-base", "FLAN-T5-base")])
def test_a_model_is_found_under_the_names_it_goes_by(name, entry):
    assert sizes.published_size(name).name == entry


def test_a_contradiction_is_refused_naming_both_figures_and_the_source():
    with pytest.raises(ValueError) as exc:
        sizes.check_stated_size("flan-t5-large", 70.0, "--model-size flan-t5-large=70B")
    assert "70B" in str(exc.value) and "0.78B" in str(exc.value) and "Chung et al. 2022" in str(exc.value)
    sizes.check_stated_size("flan-t5-large", 0.78, "x")  # agrees
    sizes.check_stated_size("llama3.2:3b", 3.0, "x")  # a rounded statement agrees (3.21B published)
    sizes.check_stated_size("gpt-4o-mini", 8.0, "x")  # not published: nothing to contradict
    sizes.check_stated_size("my-own-model", 8.0, "x")  # not in the table
    with pytest.raises(ValueError, match="contradicts"):  # the Python API's statements go through it too
        sizes.with_stated_size(Provenance("imported", "flan-t5-large"), {"flan-t5-large": 70.0})


def test_the_cli_refuses_a_stated_size_that_contradicts_the_published_one(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--dataset", "dl19", "--judge", "flan-t5-large", "--model-size", "flan-t5-large=70B"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--model-size" in err and "0.78B" in err and "Chung et al. 2022" in err
    args = cli.build_parser().parse_args(["run", "--dataset", "dl19", "--model-size", "flan-t5-large=780M"])
    assert args.model_size == {"flan-t5-large": pytest.approx(0.78)}
