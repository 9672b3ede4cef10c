"""``python -m pipeline h2g-samples`` on the designed collection (tests/support/failure_fixture.py, real MiniLM):
its ``--json`` document and text output, a second call read back from the store, and bad input exiting 2
with a line naming it."""
from __future__ import annotations

import json

import pytest

from pipeline import cli
from tests.support.failure_fixture import write_collection
from tests.support.sampling_fixture import write_samples


@pytest.fixture
def designed(tmp_path, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = {**write_collection(tmp_path / "designed"), **write_samples(tmp_path / "designed")}
    args = ["h2g-samples", "--dataset", "dl19", "--qrels", str(files["qrels.txt"]), "--topics",
            str(files["topics.tsv"]), "--passages", str(files["passages.tsv"]), "--encoder", "minilm",
            "--retriever", f"designed-run={files['run.txt']}", "--judge", f"designed-judge={files['judge.txt']}",
            "--setup", "binary", "--generator", f"other={files['other.jsonl']}"]
    return files, args


def test_json_text_and_a_stored_result(designed, capsys):
    files, args = designed
    assert cli.main([*args, "--samples", f"m={files['samples.jsonl']}", "--json"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert out["generator"] == "m" and out["samples"] == [0, 1, 2]
    assert out["queries"]["q8"]["p_hard"] == 1.0 and out["hard"]["n_all"] == 1
    assert list(out["configurations"]) == ["designed-run | designed-judge | binary"]
    assert cli.main([*args, "--samples", f"m={files['samples.jsonl']}"]) == 0
    captured = capsys.readouterr()
    assert "read back" in captured.err  # the same inputs: the stored result
    assert "hard to generate in every sample: 1 of 8 queries; in some: 2; in none: 5" in captured.out
    assert "q6: 2/3 (67%)" in captured.out and f"stored as {out['id'][:12]}" in captured.out


def test_bad_input_exits_2_naming_it(designed, tmp_path, capsys):
    files, args = designed
    assert cli.main([*args, "--samples", "m"]) == 2  # no data folder holds answers/samples.m.dl19.jsonl
    assert "--samples m: no answers/samples.m.dl19.jsonl" in capsys.readouterr().err
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"qid": "q1", "sample": 0, "text": "x"}) + "\n")
    assert cli.main([*args, "--samples", f"m={one}"]) == 2
    assert "1 sample; the spread across samples needs at least 2" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "q1", "text": "x"}\n')
    assert cli.main([*args, "--samples", f"m={bad}"]) == 2
    assert 'bad.jsonl:1: expected an object with "qid", "sample" and "text"' in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:  # argparse's check of NAME=FILE
        cli.main([*args, "--samples", f"m={tmp_path / 'absent.jsonl'}"])
    assert exited.value.code == 2 and "argument --samples: no such file" in capsys.readouterr().err


def test_the_data_folder_gives_the_samples_and_every_other_component(tmp_path, monkeypatch, capsys):
    """``--samples NAME`` alone in a data folder (DL19's file names over the designed collection): its samples
    file, and by default its runs, judgments and the answers files of every other generator."""
    import shutil

    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    files = {**write_collection(tmp_path / "designed"), **write_samples(tmp_path / "designed")}
    folder = tmp_path / "trec_dl"
    for name, as_name in (("topics.tsv", "topics.dl19-passage.txt"), ("qrels.txt", "qrels.dl19-passage.txt"),
                          ("passages.tsv", "passages.msmarco-v1.dl19-dl20.tsv"),
                          ("run.txt", "runs/run.designed.dl19.txt"),
                          ("judge.txt", "judgments/judgments.designed-judge.dl19.txt"),
                          ("answers.jsonl", "answers/answers.m.dl19.jsonl"),
                          ("other.jsonl", "answers/answers.other.dl19.jsonl"),
                          ("samples.jsonl", "answers/samples.m.dl19.jsonl")):
        (folder / as_name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(files[name], folder / as_name)
    assert cli.main(["h2g-samples", "--dataset", "dl19", "--data", str(folder), "--samples", "m", "--encoder",
                     "minilm", "--json"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert out["samples_file"] == str((folder / "answers/samples.m.dl19.jsonl").resolve())
    assert list(out["compare"]) == ["other"]  # not the samples' own generator's answers
    assert sorted(out["configurations"]) == ["designed | designed-judge | binary", "designed | designed-judge | graded"]


def test_the_samples_model_is_named_with_its_size_and_not_set_against_itself(designed, capsys):
    files, args = designed
    assert cli.main([*args, "--samples", f"m={files['samples.jsonl']}", "--model-size", "m=7B"]) == 0
    out = capsys.readouterr().out
    assert "generator: imported:m, 7B (stated by the user)" in out  # the samples' model and its size
    assert "imported:other, unknown size" in out  # the other generator's, unknown: no verdict on it
    assert cli.main([*args[:-2], "--generator", f"m={files['answers.jsonl']}", "--samples",
                     f"m={files['samples.jsonl']}"]) == 2
    assert "--generator m: the samples' own generator" in capsys.readouterr().err
