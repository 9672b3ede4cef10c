"""Query-performance prediction as the literature defines and reports it (issue 35): targets named by any
ir_measures measure with its relevance level, the verdict that leaves pool-built statistics out, the k
sweep, and the whole ``predict`` on the data folder's DL19 BM25 run (canonical and list-mean NQC)."""
from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pipeline.predict import evaluation, targets
from pipeline.predict.evaluation import Row, Target

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "trec_dl"
needs_shared = pytest.mark.skipif(not (SHARED / "runs" / "run.bm25.dl19.txt").is_file(), reason="no shared TREC DL data")


def test_a_target_names_its_measure_and_relevance_level():
    assert targets.measure_label("AP@100") == ("AP(rel=1)@100", "binary: grade >= 1 is relevant")
    assert targets.measure_label("RR(rel=2)@10") == ("RR(rel=2)@10", "binary: grade >= 2 is relevant")
    assert targets.measure_label("R(rel=2)@100")[0] == "R(rel=2)@100"
    assert targets.measure_label("nDCG@10") == ("nDCG@10", "graded: the qrels' grades as gains")
    with pytest.raises(ValueError, match="unknown measure 'nDCG@@10'"):
        targets.measure_label("nDCG@@10")


def test_an_unknown_target_measure_is_refused_before_any_work():
    from pipeline.predict.compute import predict

    with pytest.raises(ValueError, match="--target-measure: unknown measure 'MAP@x'"):
        predict([], retrievers=["bm25"], target_measures=["nDCG@10", "MAP@x"])


def _row(tau, interval, p_holm, higher_is_easier=True, pool=False):
    return Row("dl19", "p", "post-retrieval", "t", "h2r", 43, 10, kendall_tau=tau, kendall_p_holm=p_holm,
               intervals={"kendall_tau": interval}, higher_is_easier=higher_is_easier, pool=pool)


def test_the_verdict_says_inconclusive_and_leaves_pool_statistics_out():
    assert _row(0.4, [0.2, 0.6], 0.01).verdict() == "foresees"
    assert _row(-0.4, [-0.6, -0.2], 0.01, higher_is_easier=False).verdict() == "foresees"  # harder target
    assert _row(0.4, [0.2, 0.6], 0.2).verdict() == "inconclusive"  # not significant across the table
    assert _row(0.1, [-0.1, 0.3], 0.01).verdict() == "inconclusive"  # the interval crosses 0
    assert _row(-0.4, [-0.6, -0.2], 0.01).verdict() == "does not foresee"
    assert _row(None, None, None).verdict() == "not measurable"
    pooled = _row(0.4, [0.2, 0.6], 0.01, pool=True)
    assert pooled.verdict() == evaluation.POOL_LEFT_OUT and pooled.verdict(include_pool=True) == "foresees"
    assert pooled.as_dict()["verdict"] == evaluation.POOL_LEFT_OUT


def test_the_k_sweep_gives_tau_per_k_up_to_the_run_depth():
    rng = np.random.default_rng(3)
    run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(rng.gamma(2 + i % 5, 2, size=30))} for i in range(12)}
    target = Target("nDCG@10[r]", "h2r", "x", {q: float(rng.random()) for q in run}, True, frozenset())
    rows = evaluation.k_sweep("r", run, [target], ks=(5, 10, 20, 50))
    assert sorted({r["k"] for r in rows}) == [5, 10, 20]  # depth 30: no k = 50
    assert {r["predictor"] for r in rows} >= {"nqc_listmean", "wig_listmean", "smv_listmean", "sd", "sigma_max"}
    assert not any(r["predictor"] == "nqc" for r in rows)  # no corpus score given: no canonical NQC
    row = next(r for r in rows if r["predictor"] == "sd" and r["k"] == 10)
    qids = list(run)
    sd = [np.std(sorted(run[q].values(), reverse=True)[:10]) for q in qids]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(sd, [target.values[q] for q in qids]).statistic,
                                               abs=1e-12)


def read_pairs(path: Path, value=float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out.setdefault(f[0], {})[f[2]] = value(f[4] if len(f) == 6 else f[3])
    return out


@needs_shared
def test_retrieval_targets_at_any_measure_equal_a_hand_computation(tmp_path):
    from pipeline.study.config import load_collection

    # the shared BM25 run with its ties broken (score minus rank * 1e-4), so ranks are unambiguous
    lines, ranked = [], {}
    for qid, ranking in read_pairs(SHARED / "runs" / "run.bm25.dl19.txt").items():
        order = sorted(ranking, key=lambda p: (-ranking[p], p))
        ranked[qid] = order
        lines += [f"{qid} Q0 {pid} {r} {ranking[pid] - r * 1e-4:.6f} t" for r, pid in enumerate(order, 1)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    data = load_collection("dl19", data_dir=str(SHARED))
    found, _ = targets.retrieval_targets(data, f"mine={path}", 0.25, ["AP@100", "RR(rel=2)@10"])
    assert [t.name for t in found] == ["AP(rel=1)@100[mine]", "RR(rel=2)@10[mine]"]
    assert found[1].provenance["relevance"] == "binary: grade >= 2 is relevant"
    qrels = read_pairs(SHARED / "qrels.dl19-passage.txt", int)
    for qid, judged in qrels.items():
        order = ranked.get(qid, [])
        relevant = {p for p, g in judged.items() if g >= 1}
        hits = [i for i, p in enumerate(order[:100], 1) if p in relevant]
        ap = sum((n + 1) / rank for n, rank in enumerate(hits)) / len(relevant)
        first = next((i for i, p in enumerate(order[:10], 1) if judged.get(p, 0) >= 2), None)
        assert found[0].values[qid] == pytest.approx(ap, abs=1e-9), qid
        assert found[1].values[qid] == pytest.approx(1 / first if first else 0.0, abs=1e-12), qid


@pytest.mark.slow
@needs_shared
def test_predict_on_the_data_folders_bm25_run_gives_canonical_and_list_mean_nqc(monkeypatch):
    """The whole command: the data folder's BM25 run has a known model (k1 = 0.9, b = 0.4), so NQC is
    the papers' (sd over the index's corpus score) beside the list-mean variant; the index is the data
    folder's passages, so the canonical values carry the pool mark and are left out of the verdicts."""
    from pipeline.cli import main

    for env in ("IRDASH_QPP_INDEX_MSMARCO_V1", "IRDASH_QPP_INDEX_MSMARCO_V2"):
        monkeypatch.delenv(env, raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["predict", "--dataset", "dl19", "--data", str(SHARED), "--retriever", "bm25",
                       "--target-measure", "AP(rel=2)@100", "--target-measure", "RR(rel=2)@10",
                       "--bootstrap", "50", "--json"])
    assert status == 0
    result = json.loads(out.getvalue())
    assert set(result["targets"]["dl19"]) == {"AP(rel=2)@100[bm25]", "RR(rel=2)@10[bm25]"}
    assert result["pool"] and result["pool_note"] and result["provenance"]["index"]["dl19"]["pool"]
    run_info = result["provenance"]["runs"]["dl19"][0]
    assert run_info["retrieval_model"]["k1"] == 0.9 and "BM25" in run_info["corpus_score"]
    run = read_pairs(SHARED / "runs" / "run.bm25.dl19.txt")
    nqc, mean = result["predictors"]["nqc@100[bm25]"], result["predictors"]["nqc_listmean@100[bm25]"]
    info = result["predictor_info"]["nqc@100[bm25]"]
    assert (info["k"], info["normaliser"], info["pool"]) == (100, "corpus", True)
    assert len(nqc) == 43
    for qid, value in mean.items():
        scores = list(run[qid].values())
        assert value == pytest.approx(np.std(scores) / np.mean(scores), rel=1e-9)  # top-100 run: the CV
    # the canonical normaliser is not the list's mean: the two variants rank the queries differently
    assert stats.kendalltau([nqc[q] for q in nqc], [mean[q] for q in nqc]).statistic < 0.99
    verdicts = {r["predictor"]: r["verdict"] for r in result["evaluation"]}
    assert verdicts["nqc@100[bm25]"] == verdicts["avg_idf"] == evaluation.POOL_LEFT_OUT
    assert verdicts["nqc_listmean@100[bm25]"] != evaluation.POOL_LEFT_OUT
    assert not result["settings"]["pool_in_verdicts"]
    clarity = result["predictor_info"]["clarity@100[bm25]"]
    assert clarity["pool"] and clarity["n_queries"] == 43 and "Cronen-Townsend" in clarity["definition"]
    uef = result["predictors"]["uef_nqc@100[bm25]"]
    assert all(abs(uef[q]) <= abs(nqc[q]) + 1e-12 for q in uef)  # a correlation (|sim| <= 1) times NQC
    ks = {(r["predictor"], r["k"]) for r in result["k_sweep"]["rows"]}
    assert {("nqc", 5), ("nqc", 100), ("nqc_listmean", 50)} <= ks and not any(k == 500 for _, k in ks)
    assert "never chosen" in result["k_sweep"]["note"]


def _stored(pool: bool) -> dict:
    row = _row(0.4, [0.2, 0.6], 0.01, pool=pool)
    row.predictor, row.target = "nqc@100[bm25]", "AP(rel=2)@100[bm25]"
    return {"id": "r1", "datasets": ["dl19"], "partial": pool, "pool": pool,
            "pool_note": evaluation.POOL_NOTE if pool else "", "settings": {"retrievers": ["bm25"]},
            "evaluation": [row.as_dict()],
            "targets": {"dl19": {"AP(rel=2)@100[bm25]": {"measure": "AP(rel=2)@100",
                                                         "relevance": "binary: grade >= 2 is relevant"}}},
            "provenance": {"index": {}, "runs": {"dl19": [{"name": "bm25", "provenance": "x",
                                                           "corpus_score": "BM25 (k1=0.9, b=0.4) ..."}]}},
            "k_sweep": {"note": evaluation.K_SWEEP_NOTE, "rows": [
                {"dataset": "dl19", "predictor": "nqc", "component": "bm25", "k": k, "target": "AP(rel=2)@100[bm25]",
                 "n": 43, "kendall_tau": tau} for k, tau in ((5, 0.1), (100, 0.3))]}}


def test_the_page_and_the_export_say_pool_and_show_targets_and_the_sweep():
    from pipeline.export import predictors as export
    from pipeline.views import predicting_failure as view

    pooled, full = _stored(True), _stored(False)
    assert "conditioned on the queries" in view.partial_warning(pooled) and view.partial_warning(full) is None
    table = view.table_frame(pooled)
    assert table.loc[0, "verdict"] == evaluation.POOL_LEFT_OUT and view.table_frame(full).loc[0, "verdict"] == "foresees"
    assert "conditioned on the queries" in view.table_latex(table) and "conditioned" not in view.table_latex(
        view.table_frame(full))
    line = view.provenance_line(pooled)
    assert "AP(rel=2)@100[bm25] (binary: grade >= 2 is relevant)" in line and "BM25 (k1=0.9" in line
    sweep = view.k_sweep_frame(pooled, "dl19")
    assert sweep.loc[0, "τ at k=5"] == 0.1 and sweep.loc[0, "τ at k=100"] == 0.3
    assert view.k_sweep_frame({"evaluation": []}).empty  # a result stored before the sweep
    assert "conditioned on the queries" in export.caption(pooled, "dl19")
    assert "conditioned" not in export.caption(full, "dl19")


def test_a_predictor_with_no_value_gets_a_row_with_its_reason():
    """A predictor defined on no query (e.g. Clarity when none of the run's documents is in the index) made
    the evaluation fail (numpy's ~ on an empty float array) instead of giving n = 0 and a note."""
    target = Target("nDCG@10[r]", "h2r", "x", {"q1": 0.5, "q2": 0.1}, True, frozenset({"q2"}))
    row = evaluation.evaluate_pair({}, target, name="clarity@100[r]", family="post-retrieval")
    assert row.n == 0 and row.kendall_tau is None and "fewer than" in row.note
