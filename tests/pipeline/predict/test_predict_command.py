"""``python -m pipeline predict`` on a run and a judge that are not in the data folder (files in tmp):
sd@100 per query and its Kendall τ against the run's nDCG@10 and against the judge's binary
disagreement equal an independent computation (plain parsing, numpy and scipy written here)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pipeline.cli import main

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "trec_dl"
pytestmark = pytest.mark.skipif(not (SHARED / "runs" / "run.bm25.dl19.txt").is_file(), reason="no shared TREC DL data")


def read_pairs(path: Path, value=float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 6:  # run: qid Q0 pid rank score tag
            out.setdefault(f[0], {})[f[2]] = value(f[4])
        elif len(f) == 4:  # qrels: qid 0 pid grade
            out.setdefault(f[0], {})[f[2]] = value(f[3])
    return out


def ndcg_at_10(ranking: dict[str, float], judged: dict[str, float]) -> float:
    """trec_eval's ndcg_cut_10: gain = grade, discount log2(rank + 1), ideal from the qrels."""
    top = sorted(ranking, key=lambda pid: -ranking[pid])[:10]
    dcg = sum(judged.get(pid, 0) / math.log2(i + 2) for i, pid in enumerate(top))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


@pytest.fixture(scope="module")
def outside_files(tmp_path_factory):
    """A run and a judge file outside the data folder: the shared BM25 run with every score changed
    (distinct, reordered within each query) and Llama-3.3-70B's labels with some grades changed."""
    folder = tmp_path_factory.mktemp("outside")
    rng = np.random.default_rng(11)
    lines = []
    for qid, ranking in read_pairs(SHARED / "runs" / "run.bm25.dl19.txt").items():
        scores = {pid: s * 1.7 + rng.uniform(0, 3) for pid, s in ranking.items()}
        for rank, pid in enumerate(sorted(scores, key=lambda p: -scores[p]), 1):
            lines.append(f"{qid} Q0 {pid} {rank} {scores[pid]:.6f} mine")
    run = folder / "run.mine.txt"
    run.write_text("\n".join(lines) + "\n")
    judge_lines = []
    for line in (SHARED / "judgments" / "judgments.llama-3.3-70b.dl19.txt").read_text().splitlines():
        qid, zero, pid, grade = line.split()
        if rng.random() < 0.2:
            grade = str(int(rng.integers(0, 4)))
        judge_lines.append(f"{qid} {zero} {pid} {grade}")
    judge = folder / "judge.txt"
    judge.write_text("\n".join(judge_lines) + "\n")
    return run, judge


@pytest.fixture(scope="module")
def predicted(outside_files):
    run, judge = outside_files
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["predict", "--dataset", "dl19", "--data", str(SHARED), "--retriever", f"mine={run}",
                       "--judge", f"outside={judge}", "--setup", "binary", "--k", "100", "--bootstrap", "200",
                       "--json"])
    assert status == 0
    return json.loads(out.getvalue())


def test_sd_at_100_and_its_tau_equal_an_independent_computation(outside_files, predicted):
    run_path, judge_path = outside_files
    run, qrels = read_pairs(run_path), read_pairs(SHARED / "qrels.dl19-passage.txt", int)
    judge = read_pairs(judge_path, int)
    sd = {q: float(np.std(sorted(r.values(), reverse=True)[:100], ddof=0)) for q, r in run.items() if q in qrels}
    assert predicted["predictors"]["sd@100[mine]"] == pytest.approx(sd, rel=1e-9)

    ndcg = {q: ndcg_at_10(run.get(q, {}), qrels[q]) for q in qrels}
    binary = {q: np.mean([(judge[q][p] >= 2) != (qrels[q][p] >= 2) for p in qrels[q] if p in judge.get(q, {})])
              for q in qrels if any(p in judge.get(q, {}) for p in qrels[q])}
    rows = {(r["dataset"], r["predictor"], r["target"]): r for r in predicted["evaluation"]}
    for target, values in (("nDCG@10[mine]", ndcg), ("disagreement[outside (binary)]", binary)):
        row = rows["dl19", "sd@100[mine]", target]
        qids = [q for q in values if q in sd]
        expected = stats.kendalltau([sd[q] for q in qids], [values[q] for q in qids])
        assert row["n"] == len(qids) == 43
        assert row["kendall_tau"] == pytest.approx(expected.statistic, abs=1e-12)
        assert row["kendall_p"] == pytest.approx(expected.pvalue, rel=1e-9)
        assert predicted["targets"]["dl19"][target]["values"] == pytest.approx(values, abs=1e-12)


def test_the_result_is_stored_with_its_provenance(predicted):
    from pipeline.predict import store

    stored = store.load(predicted["id"])
    assert stored["evaluation"] == predicted["evaluation"]
    index = predicted["provenance"]["index"]["dl19"]
    assert predicted["partial"] and index["partial"] and index["kind"] == "passages"
    assert predicted["predictor_info"]["avg_idf"]["partial"]
    assert {a["name"] for a in predicted["absent"]} == {"expected_grade_sd[outside]"}
    assert "imported run" in predicted["provenance"]["runs"]["dl19"][0]["provenance"]
    families = {info["family"] for info in predicted["predictor_info"].values()}
    assert families == {"pre-retrieval", "post-retrieval"}
    assert all(r["kendall_p_holm"] >= r["kendall_p"] for r in predicted["evaluation"] if r["kendall_p"] is not None)


def test_a_file_with_several_datasets_is_refused(outside_files, capsys):
    run, _ = outside_files
    assert main(["predict", "--dataset", "dl19", "--dataset", "dl20", "--data", str(SHARED),
                 "--retriever", f"mine={run}"]) != 0
    assert "one --dataset" in capsys.readouterr().err
