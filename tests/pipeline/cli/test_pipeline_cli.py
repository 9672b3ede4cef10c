"""The `python -m pipeline` contracts, run as subprocesses (as the checks outside the suite do)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.paths import PROJECT_ROOT
from pipeline.data import trec_io


def cli(*args):
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def trec(shared_dir):
    return shared_dir / "data" / "trec_dl"


def test_eval_run_json(trec):
    out = cli("eval-run", "--qrels", trec / "qrels.dl19-passage.txt", "--run", trec / "runs/run.bm25.dl19.txt", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) == {"per_query", "mean"} and len(result["per_query"]) == 43
    assert round(result["mean"], 4) == 0.5058
    assert result["mean"] == pytest.approx(sum(result["per_query"].values()) / 43)
    rr = cli("eval-run", "--qrels", trec / "qrels.dl19-passage.txt", "--run", trec / "runs/run.bm25.dl19.txt",
             "--measure", "RR(rel=2)@10", "--json")
    assert rr.returncode == 0 and json.loads(rr.stdout)["mean"] != result["mean"]


def test_errors_are_one_line_and_nonzero(trec, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("19335 Q0 p1 1 1.5 t\n19335 Q0 p2 2 oops t\n")
    out = cli("eval-run", "--qrels", trec / "qrels.dl19-passage.txt", "--run", bad, "--json")
    assert out.returncode == 2 and out.stdout == ""  # bad input (core.cli)
    assert out.stderr.strip() == f"error: {bad}:2: score 'oops' is not a number"
    foreign = cli("h2r", "--dataset", "dl19", "--data", trec, "--retriever", f"bm25={trec / 'runs/run.bm25.dl20.txt'}")
    assert foreign.returncode == 2 and "another dataset" in foreign.stderr
    assert len(foreign.stderr.strip().splitlines()) == 1
    no_qrels = cli("h2r", "--dataset", "dl22", "--data", trec, "--retriever", "bm25", "--json")
    assert no_qrels.returncode == 2 and "dl22: no qrels available" in no_qrels.stderr
    assert len(no_qrels.stderr.strip().splitlines()) == 1


def test_h2r_json_with_imported_runs(trec):
    out = cli("h2r", "--dataset", "dl20", "--data", trec, "--retriever", "bm25", "--retriever", "tasb",
              "--quantile", "0.25", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    bm25, tasb = report["retrievers"]["bm25"], report["retrievers"]["tasb"]
    assert round(bm25["mean"], 4) == 0.4796 and round(tasb["mean"], 4) == 0.6854
    assert bm25["kind"] == "imported" and "run.bm25.dl20.txt" in bm25["provenance"]
    assert bm25["n_hard"] == len(bm25["hard"]) == 14  # floor(53 * 0.25) + 1 of 54 judged queries
    assert bm25["hard_mean"] < bm25["threshold"] < bm25["mean"]
    assert report["intersection"] == sorted(set(bm25["hard"]) & set(tasb["hard"]))
    assert report["coverage"]["n_judged_queries"] == 54


@pytest.mark.slow
def test_retrieve_bm25_then_h2r_uses_the_computed_run(trec, tmp_path):
    topics = trec_io.read_topics(trec / "topics.dl19-passage.txt")
    qrels = trec_io.read_qrels(trec / "qrels.dl19-passage.txt")
    texts = trec_io.read_passages(trec / "passages.msmarco-v1.dl19-dl20.tsv")
    keep = [pid for qid in list(qrels)[:6] for pid, g in qrels[qid].items() if g >= 2][:150]
    keep += list(texts)[:150]
    folder = tmp_path / "trec_dl"
    folder.mkdir()
    (folder / "topics.dl19-passage.txt").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    (folder / "qrels.dl19-passage.txt").write_text((trec / "qrels.dl19-passage.txt").read_text())
    (folder / "passages.msmarco-v1.dl19-dl20.tsv").write_text("".join(f"{p}\t{texts[p]}\n" for p in dict.fromkeys(keep)))

    out = cli("retrieve", "--dataset", "dl19", "--retriever", "bm25", "--data", folder, "--depth", "100")
    assert out.returncode == 0, out.stderr
    assert "BM25 search" in out.stderr  # the progress bar goes to stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("bm25@computed on dl19: computed here over a partial corpus")
    assert lines[1].strip().startswith("queries: 43 (") and lines[1].endswith("depth 100")
    assert lines[2].strip().startswith("mean nDCG@10: 0.") and "over 43 judged queries" in lines[2]
    path = lines[3].strip().removeprefix("run: ")
    run = trec_io.read_run(path, known_qids=topics)
    assert set(run) <= set(qrels) and all(len(r) <= 100 for r in run.values())
    as_json = json.loads(cli("retrieve", "--dataset", "dl19", "--retriever", "bm25", "--data", folder, "--depth", "100",
                             "--json").stdout)
    assert as_json["path"] == path and as_json["name"] == "bm25@computed" and as_json["depth"] == 100
    assert f"{as_json['mean_nDCG@10']:.4f}" in lines[2] and as_json["n_queries"] == 43

    # no imported run in this folder: a bare name is computed, and reported as such
    report = cli("h2r", "--dataset", "dl19", "--data", folder, "--retriever", "bm25", "--depth", "100", "--json")
    assert report.returncode == 0, report.stderr
    bm25 = json.loads(report.stdout)["retrievers"]["bm25@computed"]
    assert bm25["kind"] == "computed" and bm25["path"] == path
    n = len(dict.fromkeys(keep))
    assert bm25["provenance"].startswith(f"computed here over a partial corpus ({n:,} passages)")
    assert bm25["n_queries"] == 43
    # with the imported full-corpus run in the folder: bm25 is that run, bm25@computed still the computed one
    (folder / "runs").mkdir()
    (folder / "runs" / "run.bm25.dl19.txt").write_text((trec / "runs" / "run.bm25.dl19.txt").read_text())
    both = cli("h2r", "--dataset", "dl19", "--data", folder, "--retriever", "bm25", "--retriever", "bm25@computed",
               "--depth", "100", "--json")
    assert both.returncode == 0, both.stderr
    named = json.loads(both.stdout)["retrievers"]
    assert named["bm25"]["kind"] == "imported" and round(named["bm25"]["mean"], 4) == 0.5058
    assert named["bm25@computed"]["path"] == path
