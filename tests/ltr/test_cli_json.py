"""``python -m ltr`` commands that gained ``--json`` with the CLI convention (``core.cli``): ``train``,
``grid`` (and ``--dry-run``), ``runs``, ``report --list-configurations``; each prints one JSON document
with the figures its text output gives."""
from __future__ import annotations

import json

import pytest

from ltr.cli import main


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> str:
    from ltr.data.synthetic import write_synthetic

    out = tmp_path_factory.mktemp("cli-json") / "mq2008-like"
    write_synthetic("synthetic-mq2008", out, seed=3, n_queries=30)
    return str(out)


def _json(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_train_grid_runs_and_report_print_one_json_document(tmp_path, data, capsys, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    store = str(tmp_path / "runs.sqlite")
    run = ["train", "--data", data, "--fold", "1", "--loss", "ranknet", "--model", "mlp", "--epochs", "1",
           "--store", store, "--quiet", "--experiment", "e"]
    out = tmp_path / "run.json"
    summary = _json(capsys, [*run, "--json", "--out", str(out)])
    assert summary == json.loads(out.read_text())  # the document --out writes
    assert summary["status"] == "completed" and set(summary["test"]) >= {"ndcg@10"}
    assert main(run) == 0  # text: one line naming the run and its test figures
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{summary['run_id']} completed ") and f"ndcg@10={summary['test']['ndcg@10']:.4f}" in line

    grid = ["grid", "--name", "e", "--data", data, "--folds", "1", "2", "--losses", "ranknet", "--models", "mlp",
            "--epochs", "1", "--store", store, "--no-progress"]
    planned = _json(capsys, [*grid, "--dry-run", "--json"])
    assert planned["grid"] == "e" and planned["completed"] == [summary["run_id"]] and len(planned["to_run"]) == 1
    done = _json(capsys, [*grid, "--json"])
    assert (done["completed"], done["skipped"], done["failed"]) == (planned["to_run"], [summary["run_id"]], {})

    listed = _json(capsys, ["runs", "--store", store, "--json"])["runs"]
    assert sorted(r["run_id"] for r in listed) == sorted([summary["run_id"], *planned["to_run"]])
    assert {r["status"] for r in listed} == {"completed"} and all(r["error"] is None for r in listed)

    configs = _json(capsys, ["report", "--data", data, "--store", store, "--list-configurations", "--json"])
    [entry] = configs["configurations"]
    assert entry["model"] == "mlp" and entry["configurations"][0]["runs"] == 2
    assert "ranknet (2 folds)" in entry["configurations"][0]["losses"]
