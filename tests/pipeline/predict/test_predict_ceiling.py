"""``python -m pipeline predict`` on the designed collection (tests/support/failure_fixture.py, real MiniLM) after
``h2g-samples`` on its three samples (tests/support/sampling_fixture.py): the H2G target of the imported answers
carries the sampling ceiling of the stored samples result (``h2g_ceiling`` in ``--json``, a line in the text),
one set with another quantile says why it has none, and the answers' missing log-probabilities are listed."""
from __future__ import annotations

import json

import pytest

from pipeline import cli
from pipeline.predict.ceiling import MEANING, sampling_ceiling
from tests.support.failure_fixture import write_collection
from tests.support.sampling_fixture import write_samples

TARGET = "BERTScore F1[m]"


@pytest.fixture
def designed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = {**write_collection(tmp_path / "designed"), **write_samples(tmp_path / "designed")}
    common = ["--dataset", "dl19", "--qrels", str(files["qrels.txt"]), "--topics", str(files["topics.tsv"]),
              "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
              "--retriever", f"designed-run={files['run.txt']}"]
    predict = ["predict", *common, "--generator", f"m={files['answers.jsonl']}", "--bootstrap", "40"]
    assert cli.main(predict + ["--json"]) == 0, capsys.readouterr().err
    before = json.loads(capsys.readouterr().out)
    assert cli.main(["h2g-samples", *common, "--samples", f"m={files['samples.jsonl']}", "--json"]) == 0
    samples = json.loads(capsys.readouterr().out)
    return predict, before, samples


def test_the_h2g_target_carries_the_ceiling_of_its_stored_samples(designed, capsys):
    predict, before, samples = designed
    assert before["h2g_ceiling"] == {}  # no h2g-samples result yet: nothing claimed
    assert cli.main(predict + ["--json"]) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    found = doc["h2g_ceiling"]["dl19"][TARGET]
    assert found["available"] and found["result"] == samples["id"] and found["n_samples"] == 3
    assert found["meaning"] == MEANING
    library = sampling_ceiling(samples["values"], samples["sets"])  # the library's figure, read back, not redone
    for key in ("kendall_tau", "auc", "smare"):
        assert found[key] == pytest.approx(library[key])
    rows = {r.pop("sample"): r for r in found["rows"]}
    assert rows["0"] == rows["1"] != rows["2"]  # samples 0 and 1 are the same answers (the fixture), so their rows are one
    assert 0 < found["kendall_tau"]["mean"] < 1  # sample 2's off-topic answers move it below agreement
    h2g_rows = [r for r in doc["evaluation"] if r["target"] == TARGET]
    assert h2g_rows and all(r["task"] == "h2g" for r in h2g_rows)
    assert any("log-probabilities" in a["reason"] for a in doc["absent"])  # imported answers hold none
    assert cli.main(predict) == 0
    text = capsys.readouterr().out
    assert f"dl19 {TARGET}: sampling ceiling τ " in text and f"h2g-samples {samples['id'][:12]}" in text
    assert MEANING in text


def test_a_prediction_with_another_hard_set_rule_says_why_it_has_no_ceiling(designed, capsys):
    predict, _, samples = designed
    assert cli.main(predict + ["--quantile", "0.5"]) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert f"dl19 {TARGET}: no sampling ceiling: the stored h2g-samples result {samples['id'][:12]}" in text
    assert "quantile 0.25 (this target: 0.5)" in text
