"""``python -m pipeline annotations --json`` without ``--report`` prints what it did (it printed nothing
on stdout before the CLI convention); with ``--report`` its document is the figures, as before."""
from __future__ import annotations

import json

import pytest

from pipeline.annotation.csv_format import LEGACY_CSV_COLUMNS
from pipeline.cli import main


def test_import_and_export_say_what_they_did(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    rows = [("ann", "dl19", "h2r", "q1", "X", 1, 1), ("ann", "dl19", "h2r", "q1", "Y", 0, 0)]
    source, target = tmp_path / "in.csv", tmp_path / "out.csv"
    source.write_text(",".join(LEGACY_CSV_COLUMNS) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    assert main(["annotations", "--import", str(source), "--export", str(target), "--json"]) == 0
    done = capsys.readouterr()
    assert json.loads(done.out) == {"imported": {"file": str(source), "n_rows": 2},
                                    "exported": {"file": str(target), "n_rows": 2, "complete_queries": 1,
                                                 "partial_queries": 0}}
    assert "imported 2 rows" in done.err and target.is_file()
    assert main(["annotations", "--report", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_rows"] == 2  # the figures, unchanged


def test_a_missing_import_file_is_refused_by_the_flag(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("IRDASH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(SystemExit) as usage:
        main(["annotations", "--import", str(tmp_path / "missing.csv")])
    assert usage.value.code == 2
    assert f"argument --import: no such file: {tmp_path / 'missing.csv'}" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()  # nothing opened
