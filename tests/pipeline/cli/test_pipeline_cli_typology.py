"""``python -m pipeline annotations`` and ``typology``: the names checks outside the suite call."""
from __future__ import annotations

import json

import pytest

from pipeline.annotation.csv_format import CSV_COLUMNS, LEGACY_CSV_COLUMNS
from tests.pipeline.cli.support import pipeline_cli, typology_args, write_typology_collection


def _csv(rows, columns=CSV_COLUMNS):
    return ",".join(columns) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


def test_annotations_import_export_report(tmp_path):
    cache = tmp_path / "cache"
    rows = [("ann", "dl19", "h2r", "q1", "X", 1, 1), ("ann", "dl19", "h2r", "q1", "Y", 0, 0),
            ("bob", "dl19", "h2r", "q1", "X", 1, 0), ("bob", "dl19", "h2r", "q1", "Y", 0, 0)]
    # an export from before runs were recorded: no typology run in this store matches, so run "" (unknown)
    (tmp_path / "in.csv").write_text(_csv(rows, LEGACY_CSV_COLUMNS))
    done = pipeline_cli("annotations", "--import", str(tmp_path / "in.csv"), "--export", str(tmp_path / "out.csv"),
               env_cache=cache)
    assert done.returncode == 0, done.stderr
    assert "imported 4 rows" in done.stderr
    assert (tmp_path / "out.csv").read_text() == _csv(sorted(r + ("", "", "readable") for r in rows))
    done = pipeline_cli("annotations", "--report", "--json", env_cache=cache)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_rows"] == 4 and report["annotators"] == ["ann", "bob"] and report["models"] == [""]
    ann = report["by_model"][""]["llm_vs_annotator"]["ann"]["overall"]
    assert (ann["cell_accuracy"], ann["precision"], ann["recall"], ann["n_decisions"]) == (1.0, 1.0, 1.0, 2)
    assert ann["exact_agreement"] == 1.0 and "true negative" in report["definitions"]["cell_accuracy"]
    kappa = report["kappa"]["ann | bob"]
    assert kappa["overall"]["kappa"] == 0.0  # ann (1, 0), bob (0, 0): p_o = 1/2 = p_e
    assert kappa["per_category"]["h2r: Y"]["kappa"] is None and "undefined" in kappa["per_category"]["h2r: Y"]["undefined"]
    text = pipeline_cli("annotations", "--report", env_cache=cache)
    assert "LLM vs union: cell accuracy" in text.stdout and "kappa ann | bob: 0.000 (2 decisions" in text.stdout
    assert "both yes 0, both no 1, only first 1, only second 0" in text.stdout
    assert "  cell_accuracy: (TP + TN) / cells" in text.stdout


def test_annotations_bad_csv_is_one_line_error(tmp_path):
    (tmp_path / "bad.csv").write_text(_csv([("ann", "dl19", "h2r", "q1", "X", 1, 2, "r", "m", "readable")]))
    done = pipeline_cli("annotations", "--import", str(tmp_path / "bad.csv"), env_cache=tmp_path / "cache")
    assert done.returncode == 2  # bad input (core.cli)
    assert done.stderr.strip().startswith("error:") and "bad.csv:2: human_applicable must be 0 or 1" in done.stderr


# ---------------------------------------------------------------------------- typology on a designed collection
@pytest.mark.slow
def test_typology_cli_imports_the_study_categories_on_a_designed_collection(tmp_path):
    from tests.support.loopback_llm import LoopbackLLMServer

    write_typology_collection(tmp_path)
    cache = tmp_path / "cache"
    with LoopbackLLMServer() as server:
        args = typology_args(tmp_path, f"ollama:llama3.2:3b@{server.url}") + ["--json", "--progress-key",
                                                                             "typology-cli"]
        done = pipeline_cli(*args, env_cache=cache)
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        # the job's progress record: hard set, then the assignment (imported: no reasons, no rounds)
        record = json.loads((cache / "jobs" / "progress" / "typology-cli.json").read_text())
        assert (record["status"], record["stage_index"], record["stages"], record["stage"]) == (
            "completed", 2, 2, "assignment of reasons to the H2J hard queries")
        assert (record["done"], record["total"], record["unit"]) == (2, 2, "query")
        chats = [r for r in server.requests if r[0] == "/api/chat"]
        assert len(chats) == 2  # one assignment per hard query; an imported typology needs no induction
        assert "(human 3, LLM 0: disagree)" in chats[0][1]["messages"][-1]["content"]
        again = pipeline_cli(*args, env_cache=cache)
        assert again.returncode == 0 and json.loads(again.stdout) == result
        assert len([r for r in server.requests if r[0] == "/api/chat"]) == 2  # stored: no new call
    assert result["source"] == "imported" and result["typology"].startswith("study")
    assert [q["qid"] for q in result["queries"]] == ["q1", "q2"] and result["hard_set"]["n_hard"] == 2
    assert [c["name"] for c in result["categories"]] == [
        "Quantitative data needs", "Specific or niche topics", "Queries unrelated to the relevance criteria",
        "Absence of relevant passage context"]
    # the loopback server echoes the prompt, whose numbered category list the parser then reads:
    # every category "assigned" -- this checks the plumbing, not a model
    assert all(len(q["assigned"]) == 4 for q in result["queries"]), result["queries"]
    assert result["model"]["backend"] == "ollama" and result["hard_set"]["judge"].startswith("j=")
    # an H2J set (per-task universe) depends on the judge alone: no generator is run or recorded
    assert "generator" not in result["hard_set"] and result["hard_set"]["configuration"]["judge"] == "j"
