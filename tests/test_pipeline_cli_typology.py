"""``python -m pipeline annotations`` and ``typology``: the names checks outside the suite call."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.annotations import CSV_COLUMNS

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, env_cache: Path):
    import os

    env = {**os.environ, "IRDASH_CACHE_DIR": str(env_cache)}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _csv(rows):
    return ",".join(CSV_COLUMNS) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


def test_annotations_import_export_report(tmp_path):
    cache = tmp_path / "cache"
    rows = [("ann", "dl19", "h2r", "q1", "X", 1, 1), ("ann", "dl19", "h2r", "q1", "Y", 0, 0),
            ("bob", "dl19", "h2r", "q1", "X", 1, 0), ("bob", "dl19", "h2r", "q1", "Y", 0, 0)]
    (tmp_path / "in.csv").write_text(_csv(rows))
    done = cli("annotations", "--import", str(tmp_path / "in.csv"), "--export", str(tmp_path / "out.csv"),
               env_cache=cache)
    assert done.returncode == 0, done.stderr
    assert "imported 4 rows" in done.stderr
    assert (tmp_path / "out.csv").read_text() == _csv(sorted(rows))
    done = cli("annotations", "--report", "--json", env_cache=cache)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_rows"] == 4 and report["annotators"] == ["ann", "bob"]
    ann = report["llm_vs_annotator"]["ann"]["overall"]
    assert (ann["accuracy"], ann["precision"], ann["recall"], ann["n_decisions"]) == (1.0, 1.0, 1.0, 2)
    kappa = report["kappa"]["ann | bob"]
    assert kappa["overall"]["kappa"] == 0.0  # ann (1, 0), bob (0, 0): p_o = 1/2 = p_e
    assert kappa["per_category"]["h2r: Y"]["kappa"] is None and "undefined" in kappa["per_category"]["h2r: Y"]["undefined"]
    text = cli("annotations", "--report", env_cache=cache)
    assert "LLM vs union" in text.stdout and "kappa ann | bob: 0.000" in text.stdout


def test_annotations_bad_csv_is_one_line_error(tmp_path):
    (tmp_path / "bad.csv").write_text(_csv([("ann", "dl19", "h2r", "q1", "X", 1, 2)]))
    done = cli("annotations", "--import", str(tmp_path / "bad.csv"), env_cache=tmp_path / "cache")
    assert done.returncode == 1
    assert done.stderr.strip().startswith("error:") and "bad.csv:2: human_applicable must be 0 or 1" in done.stderr
