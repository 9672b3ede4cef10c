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
    assert targets.measure_label("AP@100", 2) == ("AP(rel=2)@100", "binary: grade >= 2 is relevant")
    assert targets.measure_label("AP(rel=1)@100", 2)[0] == "AP(rel=1)@100"  # a level stated is kept
    assert targets.measure_label("RR(rel=2)@10") == ("RR(rel=2)@10", "binary: grade >= 2 is relevant")
    assert targets.measure_label("R(rel=2)@100")[0] == "R(rel=2)@100"
    assert targets.measure_label("nDCG@10") == ("nDCG@10", "graded: the qrels' grades as gains")
    with pytest.raises(ValueError, match="unknown measure 'nDCG@@10'"):
        targets.measure_label("nDCG@@10")


def test_trec_dl_binary_measures_default_to_rel_2_and_other_collections_to_rel_1():
    """TREC DL's convention (grades 0-3, relevant = 2 or 3) for a binary measure named without a level on a
    DL year; ir_measures' 1 on a collection the tool does not know as TREC DL."""
    from types import SimpleNamespace

    for year in ("dl19", "dl20", "dl21", "dl22"):
        assert targets.default_relevance(SimpleNamespace(name=year)) == 2
    assert targets.default_relevance(SimpleNamespace(name="custom")) == 1


def test_an_unknown_target_measure_is_refused_before_any_work():
    from pipeline.predict.compute import predict

    with pytest.raises(ValueError, match="--target-measure: unknown measure 'MAP@x'"):
        predict([], retrievers=["bm25"], target_measures=["nDCG@10", "MAP@x"])


def _row(tau, interval, p_holm, higher_is_easier=True, pool=False):
    return Row("dl19", "p", "post-retrieval", "t", "h2r", 43, 10, kendall_tau=tau, kendall_p_holm=p_holm,
               intervals={"kendall_tau": interval}, higher_is_easier=higher_is_easier, pool=pool)


def test_foresees_needs_the_claims_minimum_n_and_a_model_that_may_carry_a_verdict():
    """Issue 40 item 7: a target made by a sub-1B model (an H2G target from a 0.494B generator read
    'foresees' at tau 0.88) or of unknown size carries no verdict; fewer queries than the study's claims'
    minimum read inconclusive with the n that is missing."""
    claims = json.loads((Path(evaluation.__file__).parents[1] / "findings" / "paper_claims.json").read_text())
    assert evaluation.MIN_VERDICT_N == claims["claims"]["all_three_under_10pct"]["rule"]["min_n"]
    small = targets.model_gate({"backend": "ollama", "model": "qwen2.5:0.5b", "parameters_b": 0.494,
                                "size_source": "ollama /api/show"})
    assert "0.49B" in small and targets.model_gate({"backend": "imported", "model": "gpt-4o-mini"}).startswith(
        "a model of unknown size")
    assert targets.model_gate({"backend": "imported", "model": "x", "parameters_b": 70.0}) == ""
    rng = np.random.default_rng(0)
    easy = {f"q{i}": float(i) for i in range(43)}
    predictor = {q: v + rng.normal(0, 2) for q, v in easy.items()}
    rows = {}
    for name, gate in (("ok", ""), ("small", small)):
        target = Target(f"BERTScore F1[{name}]", "h2g", "dl19", easy, True, frozenset(list(easy)[:10]), gate=gate)
        rows[name] = evaluation.evaluate({"dl19": {"p": SimpleValues(predictor)}}, {"dl19": [target]}, n_boot=200)[0]
    assert rows["ok"].verdict() == "foresees" and rows["ok"].kendall_tau > 0.8
    assert rows["small"].verdict() == evaluation.GATED and "0.49B" in rows["small"].verdict_reason()[1]
    assert rows["small"].as_dict()["verdict"] == evaluation.GATED
    few = _row(0.6, [0.3, 0.8], 0.001)
    few.n = evaluation.MIN_VERDICT_N - 1
    found, why = few.verdict_reason()
    assert found == "inconclusive" and why.startswith(f"n = {few.n} < minimum {evaluation.MIN_VERDICT_N} (queries)")
    assert "on its figures: holds" in why and "MDE" in why  # the core keeps the figures' verdict and the power


def test_foresees_is_a_bound_claim_of_the_shared_inference_core():
    """Issue 40: the verdict goes through core.inference (a bound: τ(easier) above 0 at one-sided level 0.975,
    i.e. a two-sided 5% test and a 95% interval), the bootstrap interval's agreement required."""
    from core.inference.claims import BOUND
    from pipeline.predict import verdict

    assert (verdict.FORESEES.type, verdict.FORESEES.threshold, verdict.FORESEES.side) == (BOUND, 0.0, "above")
    assert verdict.decide(0.4, 43, 0.01, (0.2, 0.6)).verdict == "holds"
    crossing = verdict.decide(0.1, 43, 0.01, (-0.1, 0.3))  # the test rejects, the interval does not: undecided
    assert crossing.verdict == "inconclusive" and "includes 0" in crossing.reason()
    not_significant = _row(0.4, [0.2, 0.6], 0.2).verdict_reason()
    assert not_significant[0] == "inconclusive" and "Holm-corrected p 0.2" in not_significant[1]
    assert "MDE" in not_significant[1]  # an inconclusive verdict says what the test could have seen


class SimpleValues:
    family, partial, pool, gate, name = "post-retrieval", False, False, "", "p"

    def __init__(self, values):
        self.values = values


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
    rows = evaluation.k_sweep("r", run, [target], ks=(5, 10, 20, 50), query_lengths={q: 2 for q in run}, n_boot=200)
    assert sorted({r["k"] for r in rows}) == [5, 10, 20]  # depth 30: no k = 50
    assert {r["predictor"] for r in rows} >= {"nqc_listmean", "wig_listmean", "smv_listmean", "sd", "sigma_max"}
    assert not any(r["predictor"] == "nqc" for r in rows)  # no corpus score given: no canonical NQC
    row = next(r for r in rows if r["predictor"] == "sd" and r["k"] == 10)
    qids = list(run)
    sd = [np.std(sorted(run[q].values(), reverse=True)[:10]) for q in qids]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(sd, [target.values[q] for q in qids]).statistic,
                                               abs=1e-12)
    low, high = row["tau_interval"]
    assert low <= row["kendall_tau"] <= high and row["smare"] is not None and row["pool"] is False
    # with a pool-built corpus score, the canonical values in the sweep carry the mark; list-mean ones do not
    marked = evaluation.k_sweep("r", run, [target], ks=(5,), corpus_scores={q: 1.0 for q in run},
                                query_lengths={q: 2 for q in run}, pool=True, partial_corpus=True, n_boot=200)
    pool = {r["predictor"]: r["pool"] for r in marked}
    assert pool["nqc"] and pool["wig"] and pool["smv"] and not pool["nqc_listmean"] and not pool["sd"]


def test_smare_is_the_mean_scaled_absolute_rank_error():
    """Faggioli et al. 2021: sARE = |r_pred - r_true| / n, sMARE their mean; 0 for the target's own order,
    the reversed order of four queries gives (3 + 1 + 1 + 3) / 4 / 4; a harder-is-higher target is ranked
    by its negation (easiness), as τ is oriented."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert evaluation.smare(evaluation.scaled_rank_errors(x, x))[0] == 0.0
    assert evaluation.smare(evaluation.scaled_rank_errors(x, -x))[0] == pytest.approx(8 / 16)
    ties = evaluation.scaled_rank_errors(np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    assert ties.tolist() == pytest.approx([0.5 / 3, 0.5 / 3, 0.0])  # average ranks 1.5, 1.5, 3
    values = {f"q{i}": float(i) for i in range(8)}
    harder = Target("disagreement[j]", "h2j", "x", {q: -v for q, v in values.items()}, False, frozenset({"q0"}))
    row = evaluation.evaluate_pair(values, harder, name="p", family="pre-retrieval", n_boot=100)
    assert row.smare == 0.0 and row.intervals["smare"] == [0.0, 0.0] and row.tau_easier == pytest.approx(1.0)


def test_wig_divides_by_the_analyzed_query_length_and_pool_marks_only_what_reads_the_index():
    """Issue 42: WIG's |q| was the whitespace words of the raw text; it is the analyzed length (the index's
    Lucene analyzer). query_length reads no statistics, so carries neither mark; a canonical NQC read from
    a pool-built corpus score names sd@k beside it."""
    from pipeline.predict import catalog, pre_retrieval as pre

    terms = pre.TermMatrix.from_counts({"q": [("wifi", 3, 4), ("bluetooth", 2, 2)]}, n_docs=10, n_tokens=50)
    marks = {pv.predictor: (pv.pool, pv.partial) for pv in catalog.pre_retrieval_values(terms, partial_corpus=True,
                                                                                       pool=True)}
    assert marks["query_length"] == (False, False) and marks["avg_idf"] == (True, True)
    run = {"q": {f"d{i}": float(10 - i) for i in range(6)}}
    found = {pv.predictor: pv for pv in catalog.post_retrieval_values(
        "r", run, terms.lengths(), k=5, wig_k=2, corpus_scores={"q": 1.0}, pool=True, partial_corpus=True)}
    assert found["wig@2"].values["q"] == pytest.approx((9.5 - 1.0) / np.sqrt(2))  # |q| = 2 analyzed terms
    assert found["nqc@5"].beside == "sd@5[r]" and found["nqc@5"].pool and not found["sd@5"].pool
    assert not found["wig_listmean@2"].pool and found["wig@2"].pool and found["wig@2"].beside == ""


@needs_shared
def test_wig_on_real_dl19_uses_the_analyzed_length_not_the_words():
    """The reported defect on the real data: most DL19 queries' word counts differ from their analyzed
    length (stopwords), and WIG@5 now divides by the analyzed one."""
    from pipeline.predict import catalog, corpus_score
    from pipeline.predict.index_stats import open_index, resolve_index
    from pipeline.retrieval.retrievers import get_run
    from pipeline.study.config import load_collection

    data = load_collection("dl19", data_dir=str(SHARED))
    queries = data.queries()
    index = open_index(data, resolve_index("dl19"))
    terms = index.term_matrix(queries)
    lengths = terms.lengths()
    differ = [q for q, text in queries.items() if len(text.split()) != lengths[q]]
    assert len(differ) > len(queries) / 2
    assert queries["1110199"] == "what is wifi vs bluetooth" and lengths["1110199"] == 4  # "is" is a stopword
    run = get_run(data, "bm25")
    scores = corpus_score.corpus_scores(terms, corpus_score.run_model(run))
    wig = {pv.predictor: pv for pv in catalog.post_retrieval_values("bm25", run.run, lengths, k=100, wig_k=5,
                                                                    only=set(queries), corpus_scores=scores)}["wig@5"]
    for qid in differ:
        top = sorted(run.run[qid].values(), reverse=True)[:5]
        assert wig.values[qid] == pytest.approx((np.mean(top) - scores[qid]) / np.sqrt(lengths[qid]), rel=1e-12)
        assert wig.values[qid] != pytest.approx((np.mean(top) - scores[qid]) / np.sqrt(len(queries[qid].split())))


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
    found, _ = targets.retrieval_targets(data, f"mine={path}", 0.25, ["AP(rel=1)@100", "RR@10", "RR(rel=2)@10"])
    assert [t.name for t in found] == ["AP(rel=1)@100[mine]", "RR(rel=2)@10[mine]"]  # TREC DL's rel=2 by default
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
    assert {("clarity", 5), ("clarity", 100), ("uef_nqc", 20), ("uef_wig_listmean", 50)} <= ks  # issue 42
    assert "never chosen" in result["k_sweep"]["note"]
    sweep = {(r["predictor"], r["k"], r["target"]): r for r in result["k_sweep"]["rows"]}
    for name, pool in (("nqc", True), ("clarity", True), ("uef_nqc_listmean", True), ("sd", False),
                       ("wig_listmean", False)):  # every index-dependent value is marked, and only those
        row = sweep[name, 20, "AP(rel=2)@100[bm25]"]
        assert row["pool"] is pool and row["tau_interval"][0] <= row["kendall_tau"] <= row["tau_interval"][1], name
    # issue 42: every index-dependent value carries the mark, query_length (the analyzer only) does not
    info = result["predictor_info"]
    assert not info["query_length"]["pool"] and info["avg_idf"]["pool"] and info["wig@5[bm25]"]["pool"]
    assert verdicts["query_length"] != evaluation.POOL_LEFT_OUT
    assert info["nqc@100[bm25]"]["beside"] == "sd@100[bm25]" and not info["sd@100[bm25]"]["pool"]
    rows = {(r["predictor"], r["target"]): r for r in result["evaluation"]}
    for row in result["evaluation"]:  # sMARE beside τ in every measurable row, with its interval
        if row["kendall_tau"] is not None:
            low, high = row["intervals"]["smare"]
            assert 0 <= low <= row["smare"] <= high <= 1, row["predictor"]
    nqc_row = rows["nqc@100[bm25]", "AP(rel=2)@100[bm25]"]
    assert (nqc_row, rows["sd@100[bm25]", "AP(rel=2)@100[bm25]"]) in evaluation.beside_rows(result)


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
    for entry in pooled["k_sweep"]["rows"]:  # the sweep as stored today: the pool mark and τ's interval
        entry.update(pool=True, tau_interval=[entry["kendall_tau"] - 0.2, entry["kendall_tau"] + 0.2])
    sweep = view.k_sweep_frame(pooled, "dl19")
    assert sweep.loc[0, "predictor"] == "nqc[bm25] (pool)" and sweep.loc[0, "95% CI at k=100"] == "[0.10, 0.50]"
    assert list(sweep.columns[-4:]) == ["τ at k=5", "95% CI at k=5", "τ at k=100", "95% CI at k=100"]
    assert "smare" in table.columns and "verdict_reason" in table.columns
    assert view.k_sweep_frame({"evaluation": []}).empty  # a result stored before the sweep
    assert export.latex_frame(export.evaluation_table(pooled, "dl19")).loc[0, "predictor"] == "nqc@100[bm25] (pool)"
    assert export.latex_frame(export.evaluation_table(full, "dl19")).loc[0, "predictor"] == "nqc@100[bm25]"
    hover = view.heatmap(pooled, "dl19").data[1].hovertext[0]
    assert "pool: reads a pool-built index" in hover
    # the caption names the pool in short, the definitions (predictor-definitions.csv, the manifest) in full
    assert "own pools" in export.caption(pooled, "dl19") and "own pools" not in export.caption(full, "dl19")
    assert "conditioned on the queries" in export.definitions(pooled, "dl19")["pool"]
    assert "pool" not in export.definitions(full, "dl19")


def test_a_predictor_with_no_value_gets_a_row_with_its_reason():
    """A predictor defined on no query (e.g. Clarity when none of the run's documents is in the index) made
    the evaluation fail (numpy's ~ on an empty float array) instead of giving n = 0 and a note."""
    target = Target("nDCG@10[r]", "h2r", "x", {"q1": 0.5, "q2": 0.1}, True, frozenset({"q2"}))
    row = evaluation.evaluate_pair({}, target, name="clarity@100[r]", family="post-retrieval")
    assert row.n == 0 and row.kendall_tau is None and "fewer than" in row.note


BENCH = Path(__file__).resolve().parents[3] / "bench"


def test_the_bench_summary_applies_the_librarys_verdict(tmp_path):
    """bench/predict_summary.py had its own 'foresees' rule (Holm p and an AUC interval) and counted rows read
    from pool-built statistics; it now reads the library's verdict for each stored row."""
    import subprocess
    import sys

    document = _stored(True)
    full = _row(0.4, [0.2, 0.6], 0.01)
    full.predictor, full.target, full.tau_easier, full.auc = "sd@100[bm25]", "AP(rel=2)@100[bm25]", 0.4, 0.7
    gated = _row(0.4, [0.2, 0.6], 0.01)
    gated.predictor, gated.target, gated.tau_easier, gated.auc = "sd@100[bm25]", "BERTScore F1[g]", 0.4, 0.7
    gated.gate = "target BERTScore F1[g]: a small model (0.49B)"
    document["evaluation"][0].update(tau_easier=0.4, auc=0.7)
    document["evaluation"] += [full.as_dict(), gated.as_dict()]
    document["provenance"]["auc"] = evaluation.AUC_NOTE
    path = tmp_path / "result.json"
    path.write_text(json.dumps(document))
    out = subprocess.run([sys.executable, str(BENCH / "predict_summary.py"), str(path), "--all"], capture_output=True,
                         text=True, check=True).stdout
    assert "dl19 · AP(rel=2)@100[bm25]: 1 of 2 predictors foresee it" in out  # the pool row is left out
    assert "nqc@100[bm25] (pool)" in out and evaluation.POOL_LEFT_OUT in out
    assert "dl19 · BERTScore F1[g]: no predictor foresees it (of 1)" in out and evaluation.GATED in out


def test_committed_bench_results_name_no_machine_folder():
    """bench/results/qpp_literature_dl19.md printed the machine's cache path; the writers now write the data
    folder and the cache by name (bench/qpp_literature_dl19.portable)."""
    sys_path = str(BENCH)
    import sys

    sys.path.insert(0, sys_path)
    try:
        from qpp_literature_dl19 import portable
    finally:
        sys.path.remove(sys_path)
    record = {"run": "imported full-corpus run (/data/x/runs/run.bm25.dl19.txt)", "index": "at /cache/bm25/l1"}
    assert portable(record, {"/data/x": "<data folder>", "/cache/": "<cache>"}) == {
        "run": "imported full-corpus run (<data folder>/runs/run.bm25.dl19.txt)", "index": "at <cache>/bm25/l1"}
    for name in ("qpp_literature_dl19.md", "qpp_literature_dl19.json", "predict_dl19_dl20.json"):
        text = (BENCH / "results" / name).read_text(encoding="utf-8")
        for folder in ("/work/", "/tmp/", "/home/", "/Users/"):
            assert folder not in text, (name, folder)


def test_the_stored_dl19_dl20_prediction_names_each_normaliser():
    """bench/results/predict_dl19_dl20.json stored the list-mean NQC under the canonical name nqc@100; in the
    regenerated file the canonical name is the corpus-score NQC of the run with a known model (BM25), a run
    without one (TAS-B) has the list-mean variant only, and every index-dependent value carries the pool mark."""
    document = json.loads((BENCH / "results" / "predict_dl19_dl20.json").read_text(encoding="utf-8"))
    info = document["predictor_info"]
    assert info["nqc@100[bm25]"]["normaliser"] == "corpus" and info["nqc@100[bm25]"]["pool"]
    assert "nqc@100[tasb]" not in info and info["nqc_listmean@100[tasb]"]["normaliser"] == "list_mean"
    assert not info["query_length"]["pool"] and all(info[name]["pool"] for name in ("avg_idf", "clarity@100[tasb]"))
    assert all("smare" in row for row in document["evaluation"])


def test_the_power_of_a_large_effect_is_one_query_not_an_error():
    """core.inference.power.n_to_decide raised on an effect above statsmodels' solver bracket (n >= 2): a
    gated QPP row with τ 0.88 over 43 queries failed to print its power (fixed there with the closed form)."""
    from core.inference.power import n_to_decide

    assert n_to_decide(0.2, 0.9, 0.975) == 1
    assert n_to_decide(1.0, 0.1, 0.975) == pytest.approx(785, abs=1)  # (1.96 + 0.84)^2 / 0.1^2, the solver's own
