"""One LETOR file cross-validated by query (issue 34): ``ltr split`` and ``--data FILE.txt:folds=5,seed=0``
give the same deterministic split, named by the user's file (never a cache path)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import DatasetError
from ltr.cli import main
from ltr.data.crossval import fold_parts, parse_file_split, write_letor_folds
from ltr.store import RunStore, canonical_data

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def letor_file(tiny_data, tmp_path) -> Path:
    """One LETOR file: the tiny data set's Fold1 train, vali and test files one after the other."""
    out = tmp_path / "my-queries.txt"
    out.write_text("".join((Path(tiny_data) / "Fold1" / f"{s}.txt").read_text() for s in ("train", "vali", "test")))
    return out


def _qids(path: Path) -> list[str]:
    return [line.split()[1] for line in path.read_text().splitlines() if line.strip()]


def test_the_split_is_deterministic_and_rotates_every_query_through_one_test_part(letor_file, tmp_path):
    a = write_letor_folds(letor_file, tmp_path / "a", folds=5, seed=0)
    b = write_letor_folds(letor_file, tmp_path / "b", folds=5, seed=0)
    other = write_letor_folds(letor_file, tmp_path / "c", folds=5, seed=1)
    files = [f"Fold{k}/{s}.txt" for k in range(1, 6) for s in ("train", "vali", "test")]
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    assert any((a / f).read_bytes() != (other / f).read_bytes() for f in files)
    everything = sorted(letor_file.read_text().splitlines())
    tested = []
    for k in range(1, 6):
        parts = {s: (a / f"Fold{k}" / f"{s}.txt") for s in ("train", "vali", "test")}
        qids = {s: set(_qids(p)) for s, p in parts.items()}
        assert not (qids["train"] & qids["vali"]) and not (qids["train"] & qids["test"]) \
            and not (qids["vali"] & qids["test"])
        assert sorted(line for p in parts.values() for line in p.read_text().splitlines()) == everything
        tested += sorted(qids["test"])
    assert sorted(tested) == sorted(set(_qids(letor_file)))  # each query tested exactly once
    assert fold_parts(1, 5) == {"train": [0, 1, 2], "vali": [3], "test": [4]}  # LETOR's rotation
    record = json.loads((a / "split.json").read_text())
    assert record["source"] == "my-queries.txt" and record["folds"] == 5 and record["seed"] == 0


def test_a_letor_file_trains_as_data_named_by_the_file(letor_file, tmp_path, capsys):
    """Before: ``ltr train --data FILE.txt`` was refused (unknown dataset)."""
    store = tmp_path / "runs.sqlite"
    code = main(["train", "--data", f"{letor_file}:folds=5,seed=0", "--fold", "2", "--loss", "ranknet",
                 "--model", "mlp", "--epochs", "1", "--store", str(store), "--quiet"])
    assert code == 0, capsys.readouterr().err
    with RunStore(store) as runs:
        run = runs.list_runs().iloc[0]
    assert run["data"] == f"{letor_file.resolve()}:folds=5,seed=0"  # the user's file, never a cache path
    assert run["run_id"].startswith("my-queries.txt_folds_5_seed_0-f2-ranknet-mlp-")
    # the options at their defaults and left out are the same data set, so the same run
    assert canonical_data(str(letor_file)) == canonical_data(f"{letor_file}:seed=0,folds=5") == run["data"]


@pytest.mark.parametrize("options, match", [("folds=2", "at least 3"), ("fold=5", "bad option"),
                                            ("folds=x", "bad option")])
def test_bad_split_options_are_named(letor_file, options, match):
    with pytest.raises(DatasetError, match=match):
        parse_file_split(f"{letor_file}:{options}")


def test_ltr_split_writes_a_letor_folder_and_refuses_a_folder_holding_something_else(letor_file, tmp_path, capsys):
    out = tmp_path / "folds"
    assert main(["split", str(letor_file), "--folds", "4", "--seed", "3", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["folds"] == 4 and sorted(p.name for p in out.iterdir()) == ["Fold1", "Fold2", "Fold3", "Fold4",
                                                                              "split.json"]
    # the same split from --data: the same files
    from ltr.data.datasets import resolve_dataset
    _spec, cached = resolve_dataset(f"{letor_file}:folds=4,seed=3")
    assert (cached / "Fold3" / "vali.txt").read_bytes() == (out / "Fold3" / "vali.txt").read_bytes()
    assert main(["split", str(letor_file), "--folds", "5", "--out", str(out)]) == 2  # another split there
    assert "holds another split" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    assert main(["split", str(letor_file), "--out", str(tmp_path / "full")]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\nnot a letor line\n")
    assert main(["split", str(bad), "--out", str(tmp_path / "never")]) == 2
    assert not (tmp_path / "never").exists()
