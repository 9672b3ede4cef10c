"""``python -m pipeline annotations`` and ``typology``: the names checks outside the suite call."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.annotation.csv_format import CSV_COLUMNS, LEGACY_CSV_COLUMNS

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, env_cache: Path):
    import os

    env = {**os.environ, "IRDASH_CACHE_DIR": str(env_cache)}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _csv(rows, columns=CSV_COLUMNS):
    return ",".join(columns) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


def test_annotations_import_export_report(tmp_path):
    cache = tmp_path / "cache"
    rows = [("ann", "dl19", "h2r", "q1", "X", 1, 1), ("ann", "dl19", "h2r", "q1", "Y", 0, 0),
            ("bob", "dl19", "h2r", "q1", "X", 1, 0), ("bob", "dl19", "h2r", "q1", "Y", 0, 0)]
    # an export from before runs were recorded: no typology run in this store matches, so run "" (unknown)
    (tmp_path / "in.csv").write_text(_csv(rows, LEGACY_CSV_COLUMNS))
    done = cli("annotations", "--import", str(tmp_path / "in.csv"), "--export", str(tmp_path / "out.csv"),
               env_cache=cache)
    assert done.returncode == 0, done.stderr
    assert "imported 4 rows" in done.stderr
    assert (tmp_path / "out.csv").read_text() == _csv(sorted(r + ("", "", "readable") for r in rows))
    done = cli("annotations", "--report", "--json", env_cache=cache)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_rows"] == 4 and report["annotators"] == ["ann", "bob"] and report["models"] == [""]
    ann = report["by_model"][""]["llm_vs_annotator"]["ann"]["overall"]
    assert (ann["cell_accuracy"], ann["precision"], ann["recall"], ann["n_decisions"]) == (1.0, 1.0, 1.0, 2)
    assert ann["exact_agreement"] == 1.0 and "true negative" in report["definitions"]["cell_accuracy"]
    kappa = report["kappa"]["ann | bob"]
    assert kappa["overall"]["kappa"] == 0.0  # ann (1, 0), bob (0, 0): p_o = 1/2 = p_e
    assert kappa["per_category"]["h2r: Y"]["kappa"] is None and "undefined" in kappa["per_category"]["h2r: Y"]["undefined"]
    text = cli("annotations", "--report", env_cache=cache)
    assert "LLM vs union: cell accuracy" in text.stdout and "kappa ann | bob: 0.000 (2 decisions" in text.stdout
    assert "both yes 0, both no 1, only first 1, only second 0" in text.stdout
    assert "  cell_accuracy: (TP + TN) / cells" in text.stdout


def test_annotations_bad_csv_is_one_line_error(tmp_path):
    (tmp_path / "bad.csv").write_text(_csv([("ann", "dl19", "h2r", "q1", "X", 1, 2, "r", "m", "readable")]))
    done = cli("annotations", "--import", str(tmp_path / "bad.csv"), env_cache=tmp_path / "cache")
    assert done.returncode == 1
    assert done.stderr.strip().startswith("error:") and "bad.csv:2: human_applicable must be 0 or 1" in done.stderr


# ---------------------------------------------------------------------------- typology on a designed collection
# q1..q8: one relevant passage rN (grade 3) and one irrelevant nN (grade 0) each. The judge file
# disagrees with NIST on both passages of q1 and q2 (disagreement 1.0) and agrees elsewhere (0.0),
# so the H2J set (top quartile, ties included) is exactly {q1, q2}.
def _collection(folder: Path) -> list[str]:
    qids = [f"q{i}" for i in range(1, 9)]
    (folder / "topics.tsv").write_text("".join(f"{q}\tquestion about topic {q}\n" for q in qids))
    (folder / "qrels.txt").write_text("".join(f"{q} 0 r{q} 3\n{q} 0 n{q} 0\n" for q in qids))
    (folder / "passages.tsv").write_text("".join(f"r{q}\tthe answer about topic {q}\nn{q}\tunrelated text {q}\n"
                                                 for q in qids))
    (folder / "run.txt").write_text("".join(f"{q} Q0 {p} {k} {3 - k} r\n" for i, q in enumerate(qids)
                                            for k, p in enumerate([f"r{q}", f"n{q}"] if i % 2 else
                                                                  [f"n{q}", f"r{q}"], start=1)))
    (folder / "answers.jsonl").write_text("".join(json.dumps({"qid": q, "text": f"an answer about topic {q}"}) + "\n"
                                                  for q in qids))
    (folder / "judge.txt").write_text("".join(f"{q} 0 r{q} {0 if q in ('q1', 'q2') else 3}\n"
                                              f"{q} 0 n{q} {3 if q in ('q1', 'q2') else 0}\n" for q in qids))
    return qids


def typology_args(folder: Path, assigner: str, task: str = "h2j") -> list[str]:
    """``typology`` on :func:`_collection`'s files with the study's categories, assigned by ``assigner``."""
    return ["typology", "--qrels", str(folder / "qrels.txt"), "--topics", str(folder / "topics.tsv"),
            "--passages", str(folder / "passages.tsv"), "--task", task,
            "--retriever", f"r={folder / 'run.txt'}", "--generator", f"g={folder / 'answers.jsonl'}",
            "--judge", f"j={folder / 'judge.txt'}", "--encoder", "minilm", "--typology", "study",
            "--assigner", assigner]


@pytest.mark.slow
def test_typology_cli_imports_the_study_categories_on_a_designed_collection(tmp_path):
    from tests.loopback_llm import LoopbackLLMServer

    _collection(tmp_path)
    cache = tmp_path / "cache"
    with LoopbackLLMServer() as server:
        args = typology_args(tmp_path, f"ollama:llama3.2:3b@{server.url}") + ["--json", "--progress-key",
                                                                             "typology-cli"]
        done = cli(*args, env_cache=cache)
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
        again = cli(*args, env_cache=cache)
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
