"""Two studies that differ only in their settings are told apart in ``pipeline studies`` and on the Failure
overlap page's list (issue 30 item 7): before, a binary and a graded study printed the same line."""
from __future__ import annotations

import json


from pipeline import cli
from pipeline.study import store as studies
from pipeline.study.config import load_collection
from pipeline.study.run import run_study
from pipeline.views import failure_overlap as view
from tests.support.failure_fixture import write_collection


def test_a_binary_and_a_graded_study_read_apart(cache, tmp_path, capsys):
    files = write_collection(tmp_path / "c")
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    common = dict(retrievers=[f"r={files['run.txt']}"], generators=[f"g={files['answers.jsonl']}"],
                  judges=[f"j={files['judge.txt']}"], encoder="minilm", progress=False, log=lambda m: None)
    binary = run_study(data, setups=("binary",), **common)
    graded = run_study(data, setups=("graded",), cap=4, universe="common", **common)
    lines = {s["id"]: view.study_label(s) for s in studies.list_studies("designed")}
    assert lines[binary.id] != lines[graded.id]
    assert ("· r | g | j · binary · cap 20 · q 0.25 · encoder minilm · partial refs exclude · truncated exclude · "
            "universe per-task · 1 configurations ·") in lines[binary.id]
    assert "· graded · cap 4 · q 0.25 · encoder minilm ·" in lines[graded.id] and "universe common" in lines[graded.id]
    assert cli.main(["studies", "--dataset", "designed"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert sorted(printed) == sorted(lines.values())
    assert cli.main(["studies", "--dataset", "designed", "--json"]) == 0
    out = {s["id"]: s for s in json.loads(capsys.readouterr().out)["studies"]}
    assert out[graded.id]["settings"].startswith("graded · cap 4")
    assert out[binary.id]["components"] == {"generators": ["g"], "judges": ["j"], "encoders": ["minilm"]}
    assert out[binary.id]["description"] == lines[binary.id]


def test_an_old_study_entry_says_its_universe_was_not_recorded():
    entry = {"id": "20261201T211003Z-3fa2c1d0-9b1e", "time": "2026-12-01T21:10:03Z", "n_configurations": 2,
             "configuration": {"retrievers": ["bm25"], "generators": ["auto"], "judges": ["llama"],
                               "setups": ["binary", "graded"], "quantile": 0.25, "cap": 20}}
    assert studies.describe(entry) == ("2026-12-01 21:10 UTC · bm25 | auto | llama · binary+graded · cap 20 · "
                                       "q 0.25 · universe common (not recorded) · 2 configurations · "
                                       "20261201T211003Z-3fa2c1d0-9b1e")
