"""TREC readers/writer: strictness on bad input (file + line in every error) and round trips."""
from __future__ import annotations

import pytest

from pipeline.data import trec_io
from pipeline.data.trec_io import TrecFormatError


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_qrels_groups_by_query(tmp_path):
    path = write(tmp_path, "qrels.txt", "1 0 a 3\n1 0 b 0\n\n2 Q0 a 1\n")
    assert trec_io.read_qrels(path) == {"1": {"a": 3, "b": 0}, "2": {"a": 1}}


@pytest.mark.parametrize("text, line, problem", [
    ("1 0 a 3\n1 0 b\n", 2, "expected 4 fields"),
    ("1 0 a 3\n1 0 b high\n", 2, "not an integer"),
    ("1 0 a 3\n2 0 b 1\n1 0 a 2\n", 3, "duplicate judgment for query 1, passage a"),
    ("1 0 a 3\n1 0 b 7\n", 2, "grade 7 is outside 0-3"),  # issue 19: qrels checked like judgments
    ("1 0 a -1\n", 1, "grade -1 is outside 0-3"),
])
def test_read_qrels_errors_name_file_and_line(tmp_path, text, line, problem):
    path = write(tmp_path, "qrels.txt", text)
    with pytest.raises(TrecFormatError, match=problem) as info:
        trec_io.read_qrels(path)
    assert info.value.line_no == line
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_read_run_and_errors(tmp_path):
    good = write(tmp_path, "run.txt", "1 Q0 a 1 2.5 t\n1 Q0 b 2 1.5 t\n2 Q0 a 1 -0.5 t\n")
    assert trec_io.read_run(good) == {"1": {"a": 2.5, "b": 1.5}, "2": {"a": -0.5}}
    assert trec_io.read_run_tag(good) == "t"
    cases = [("1 Q0 a 1 2.5\n", "expected 6 fields"), ("1 Q0 a one 2.5 t\n", "rank 'one'"),
             ("1 Q0 a 1 x t\n", "score 'x'"), ("1 Q0 a 1 nan t\n", "NaN"),
             ("1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n", "duplicate entry for query 1, passage a")]
    for text, problem in cases:
        with pytest.raises(TrecFormatError, match=problem):
            trec_io.read_run(write(tmp_path, "bad.txt", text))


def test_unknown_and_foreign_query_ids(tmp_path):
    topics = {"1", "2", "3"}
    one_unknown = write(tmp_path, "run1.txt", "1 Q0 a 1 2 t\n2 Q0 a 1 2 t\n9 Q0 a 1 2 t\n")
    with pytest.raises(TrecFormatError, match="unknown query id 9") as info:
        trec_io.read_run(one_unknown, known_qids=topics)
    assert info.value.line_no == 3
    foreign = write(tmp_path, "run2.txt", "7 Q0 a 1 2 t\n8 Q0 a 1 2 t\n1 Q0 a 1 2 t\n")
    with pytest.raises(TrecFormatError, match="another dataset"):
        trec_io.read_run(foreign, known_qids=topics)
    with pytest.raises(TrecFormatError, match="another dataset"):
        trec_io.read_qrels(write(tmp_path, "q.txt", "7 0 a 1\n"), known_qids=topics)


def test_topics_and_passages(tmp_path):
    assert trec_io.read_topics(write(tmp_path, "t.txt", "1\twhat is x\n2\twhy y \n")) == {"1": "what is x", "2": "why y"}
    with pytest.raises(TrecFormatError, match="duplicate query id 1"):
        trec_io.read_topics(write(tmp_path, "t2.txt", "1\ta\n1\tb\n"))
    with pytest.raises(TrecFormatError, match=r":2: expected 'qid<TAB>query'"):
        trec_io.read_topics(write(tmp_path, "t3.txt", "1\ta\n2 b\n"))
    headed = write(tmp_path, "p.tsv", "pid\tjudged_in\ttext\n10\tdl19\ttext\twith tab\n11\t-\tother\n")
    assert trec_io.read_passages(headed) == {"10": "text\twith tab", "11": "other"}
    assert trec_io.read_passages(write(tmp_path, "c.tsv", "10\tplain text\n")) == {"10": "plain text"}
    with pytest.raises(TrecFormatError, match="duplicate passage id 10"):
        trec_io.read_passages(write(tmp_path, "d.tsv", "10\ta\n10\tb\n"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        trec_io.read_qrels(tmp_path / "missing.txt")


def test_write_run_round_trip_sorted_and_atomic(tmp_path):
    run = {"1": {"a": 1.0, "b": 3.0, "c": 3.0}, "2": {"x": 0.5}}
    path = trec_io.write_run(run, tmp_path / "out" / "run.txt", tag="mine")
    lines = path.read_text().splitlines()
    # by score, ties by descending pid (trec_eval's order), ranks from 1
    assert [line.split()[2:4] for line in lines[:3]] == [["c", "1"], ["b", "2"], ["a", "3"]]
    assert trec_io.read_run(path) == run
    assert [p.name for p in path.parent.iterdir()] == ["run.txt"]  # no temp file left behind
    with pytest.raises(ValueError, match="one non-empty word"):
        trec_io.write_run(run, tmp_path / "r2.txt", tag="two words")
    assert not (tmp_path / "r2.txt").exists()
