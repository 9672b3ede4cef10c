"""Each predictor against a hand-computed case, sd@k against numpy, the pyserini term statistics
against a tiny index whose counts are known, and the shared DL19 BM25 run."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pipeline.predict import catalog, post_retrieval as post, pre_retrieval as pre

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "trec_dl"


def one_query(scores, length=2):
    return post.ScoreMatrix.from_run({"q": {f"d{i}": s for i, s in enumerate(scores)}}, {"q": length})


def test_post_retrieval_predictors_on_a_hand_case():
    m = one_query([2.0, 4.0, 1.0, 3.0])  # order in the run does not matter: sorted 4, 3, 2, 1
    sd = math.sqrt((1.5 ** 2 + 0.5 ** 2 + 0.5 ** 2 + 1.5 ** 2) / 4)
    assert post.sd_at_k(m, 4)[0] == pytest.approx(sd)
    mean = post.LIST_MEAN
    assert post.nqc_at_k(m, 4, mean)[0] == pytest.approx(sd / 2.5)  # the list-mean variant: the list's mean 2.5
    assert post.wig_at_k(m, 2, mean)[0] == pytest.approx((3.5 - 2.5) / math.sqrt(2))  # two analyzed query terms
    smv = (4 * abs(math.log(4 / 2.5)) + 3 * abs(math.log(3 / 2.5)) + 2 * abs(math.log(2 / 2.5))
           + 1 * abs(math.log(1 / 2.5))) / 4 / 2.5
    assert post.smv_at_k(m, 4, mean)[0] == pytest.approx(smv)
    for f in (post.nqc_at_k, post.smv_at_k):  # the papers' form needs a corpus score: none given, none made up
        assert np.isnan(f(m, 4)[0])
    assert post.top_score(m)[0] == 4.0
    assert post.sigma_max(m, 4)[0] == pytest.approx(sd)  # grows with the cut-off here


def test_wig_without_a_known_query_length_is_undefined_not_guessed():
    m = post.ScoreMatrix.from_run({"q": {"a": 2.0, "b": 1.0}, "stop": {"a": 1.0, "b": 0.5}}, {"stop": 0})
    assert np.isnan(post.wig_at_k(m, 1, post.LIST_MEAN)).all()  # q: no length given; stop: 0 analyzed terms


def test_sigma_max_takes_the_largest_sd_over_cut_offs():
    m = one_query([10.0, 1.0, 1.0, 1.0])
    # top 2: sd 4.5; top 3: sqrt(18) = 4.24; top 4: sqrt(15.1875) = 3.90
    assert post.sigma_max(m, 4)[0] == pytest.approx(4.5)
    assert post.sd_at_k(m, 4)[0] == pytest.approx(math.sqrt(15.1875))


def test_undefined_values_are_nan_not_zero():
    m = post.ScoreMatrix.from_run({"short": {"d": 1.0}, "negative": {"a": 2.0, "b": -1.0, "c": 0.5}}, {})
    assert np.isnan(post.sd_at_k(m, 10)[0])  # one score has no spread
    assert np.isnan(post.smv_at_k(m, 10, post.LIST_MEAN)[1])  # a non-positive score has no logarithm
    assert np.isnan(post.wig_at_k(m, 5, post.LIST_MEAN)).all()  # fewer than 5 scores
    assert not np.isnan(post.sd_at_k(m, 10)[1])


def test_sd_at_k_equals_numpy_on_random_runs():
    rng = np.random.default_rng(7)
    run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(rng.normal(10, 3, size=rng.integers(2, 150)))}
           for i in range(40)}
    m = post.ScoreMatrix.from_run(run)
    for k in (5, 10, 100):
        got = post.sd_at_k(m, k)
        expected = [np.std(sorted(run[q].values(), reverse=True)[:k], ddof=0) for q in m.qids]
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        sigma = [max(np.std(sorted(run[q].values(), reverse=True)[:j]) for j in range(2, min(k, len(run[q])) + 1))
                 for q in m.qids]
        np.testing.assert_allclose(post.sigma_max(m, k), sigma, rtol=1e-9)


def hand_terms():
    # N = 100 documents, T = 1000 term occurrences; query terms a (df 10, cf 20) twice, b (50, 100), z unseen
    return pre.TermMatrix.from_counts({"q": [("a", 10, 20), ("b", 50, 100), ("a", 10, 20), ("z", 0, 0)],
                                       "stop": []}, n_docs=100, n_tokens=1000)


def test_pre_retrieval_predictors_on_a_hand_case():
    t = hand_terms()
    idf_a, idf_b = math.log(100 / 10), math.log(100 / 50)
    scq_a, scq_b = (1 + math.log(20)) * math.log(1 + 10), (1 + math.log(100)) * math.log(1 + 2)
    assert pre.query_length(t).tolist() == [4.0, 0.0]  # the unseen term counts, a stopword query is 0
    assert pre.avg_idf(t)[0] == pytest.approx((2 * idf_a + idf_b) / 3)
    assert pre.max_idf(t)[0] == pytest.approx(idf_a)
    assert pre.sum_scq(t)[0] == pytest.approx(2 * scq_a + scq_b)
    assert pre.avg_scq(t)[0] == pytest.approx((2 * scq_a + scq_b) / 3)
    assert pre.max_scq(t)[0] == pytest.approx(scq_a)
    assert pre.avg_ictf(t)[0] == pytest.approx((2 * math.log2(1000 / 20) + math.log2(1000 / 100)) / 3)
    scs = 2 / 3 * math.log2((2 / 3) / (20 / 1000)) + 1 / 3 * math.log2((1 / 3) / (100 / 1000))
    assert pre.scs(t)[0] == pytest.approx(scs)
    for f in (pre.avg_idf, pre.max_idf, pre.sum_scq, pre.avg_scq, pre.max_scq, pre.avg_ictf, pre.scs):
        assert np.isnan(f(t)[1]), f.__name__  # no seen term: undefined, never 0


def test_canonical_nqc_wig_smv_divide_by_the_corpus_score_given():
    m = post.ScoreMatrix.from_run({"q": {"a": 2.0, "b": 4.0, "c": 1.0, "d": 3.0}}, {"q": 2}, {"q": 0.5})
    sd = math.sqrt(5 / 4)
    assert post.nqc_at_k(m, 4)[0] == pytest.approx(sd / 0.5)
    assert post.wig_at_k(m, 2)[0] == pytest.approx((3.5 - 0.5) / math.sqrt(2))
    smv = sum(s * abs(math.log(s / 2.5)) for s in (4, 3, 2, 1)) / 4 / 0.5
    assert post.smv_at_k(m, 4)[0] == pytest.approx(smv)


def test_the_catalog_names_both_variants_and_reports_k():
    run = {"q1": {"a": 3.0, "b": 1.0, "c": 2.0}, "q2": {"a": 1.0, "b": 0.5}}
    only_mean = {v.predictor: v for v in catalog.post_retrieval_values("r", run, k=2, wig_k=1)}
    assert "nqc@2" not in only_mean and "nqc_listmean@2" in only_mean  # no corpus score: no canonical NQC
    both = {v.predictor: v for v in catalog.post_retrieval_values("r", run, k=2, wig_k=1, corpus_scores={"q1": 0.1},
                                                                  model="BM25", partial_corpus=True, pool=True)}
    nqc, mean = both["nqc@2"], both["nqc_listmean@2"]
    assert (nqc.k, nqc.normaliser, nqc.model, nqc.pool, nqc.partial) == (2, "corpus", "BM25", True, True)
    assert (mean.k, mean.normaliser, mean.model, mean.pool) == (2, "list_mean", "", False)  # no index read
    assert nqc.values == {"q1": pytest.approx(0.5 / 0.1)} and nqc.undefined == ["q2"]  # q2 has no corpus score
    assert both["wig@1"].k == 1 and both["top_score"].k is None


def test_every_predictor_names_formula_and_source():
    for p in (*catalog.PRE_RETRIEVAL, *catalog.post_retrieval()):
        text = p.definition()
        assert len(text) > 60 and any(ch.isdigit() for ch in text), p.key  # a formula and a year
        assert any(name in text for name in ("He and Ounis", "Zhao", "Shtok", "Zhou and Croft", "Tao and Wu",
                                             "Pérez-Iglesias", "Cummins", "Scholer")), p.key
    assert len(catalog.PRE_RETRIEVAL) >= 4 and len(catalog.post_retrieval()) >= 4


def test_catalog_lists_undefined_queries_apart():
    values = catalog.post_retrieval_values("r", {"q1": {"a": 3.0, "b": 1.0}, "q2": {"a": 1.0}}, k=10)
    sd = next(v for v in values if v.predictor == "sd@10")
    assert sd.name == "sd@10[r]" and sd.values == {"q1": 1.0} and sd.undefined == ["q2"]


@pytest.fixture(scope="module")
def tiny_index():
    pytest.importorskip("pyserini")
    from pipeline.retrieval import bm25

    return bm25.build_index({"p1": "apple banana", "p2": "apples cherry", "p3": "dog"})  # the session's cache


def test_term_statistics_come_from_the_lucene_index(tiny_index):
    from pipeline.predict.index_stats import IndexChoice, open_index

    stats = open_index(None, IndexChoice("local", str(tiny_index), "test"))
    assert (stats.n_docs, stats.n_tokens) == (3, 5)
    terms = stats.term_matrix({"q": "Apples and dogs, zebra"})  # "and" is a stopword; zebra is unseen
    assert terms.n_terms.tolist() == [3] and terms.lengths() == {"q": 3}
    assert pre.avg_idf(terms)[0] == pytest.approx((math.log(3 / 2) + math.log(3 / 1)) / 2)
    assert pre.avg_ictf(terms)[0] == pytest.approx((math.log2(5 / 2) + math.log2(5 / 1)) / 2)


@pytest.mark.slow  # a Lucene search in the JVM: ~7 s alone
def test_canonical_nqc_equals_a_hand_computation_on_a_three_document_index(tiny_index):
    """score(D, q) by hand from the tiny index's statistics (N = 3 documents, T = 5 term occurrences;
    "apple" and "apples" stem to appl: df 2, cf 2; "dog": df 1, cf 1) under BM25 k1 = 0.9, b = 0.4, and
    NQC@3 of the BM25 run that index gives (Anserini's own scores)."""
    from pipeline.predict import corpus_score
    from pipeline.predict.index_stats import IndexChoice, open_index
    from pipeline.retrieval import bm25

    stats = open_index(None, IndexChoice("local", str(tiny_index), "test"))
    terms = stats.term_matrix({"q": "apple dog"})
    k1, b = 0.9, 0.4
    norm = k1 * (1 - b + b * 3)  # |D| / avgdl = T / (T / N) = N = 3
    by_hand = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)) * 2 / (2 + norm) + math.log(1 + (3 - 1 + 0.5) / (1 + 0.5)) * 1 / (1 + norm)
    model = corpus_score.RetrievalModel("bm25", k1, b, "test")
    scores = corpus_score.corpus_scores(terms, model)
    assert scores["q"] == pytest.approx(by_hand, rel=1e-12)
    run = bm25.search(tiny_index, {"q": "apple dog"}, bm25.BM25Settings(k1=k1, b=b, depth=10), progress=False)
    assert set(run["q"]) == {"p1", "p2", "p3"}
    # the same scorer on a real document: p1 ("apple banana", |d| = 2, avgdl = 5/3) is scored as Anserini does
    p1 = math.log(1 + 1.5 / 2.5) * 1 / (1 + k1 * (1 - b + b * 2 / (5 / 3)))
    assert run["q"]["p1"] == pytest.approx(p1, abs=1e-4)  # Anserini reports its float32 scores to 4 decimals
    listed = sorted(run["q"].values(), reverse=True)
    nqc = {v.predictor: v for v in catalog.post_retrieval_values("bm25", run, terms.lengths(), k=3,
                                                                 corpus_scores=scores)}["nqc@3"].values["q"]
    assert nqc == pytest.approx(np.std(listed, ddof=0) / by_hand, rel=1e-6)  # run scores are float32


def test_the_data_folders_bm25_run_and_computed_bm25_runs_have_a_known_model():
    from pipeline.predict.corpus_score import run_model
    from pipeline.retrieval.retrievers import RetrieverRun

    folder = RetrieverRun("bm25", "dl19", "imported", "imported full-corpus run (x)", Path("x"), {})
    computed = RetrieverRun("bm25@computed", "dl19", "computed", "computed here", Path("x"), {},
                            {"settings": {"k1": 1.2, "b": 0.75, "depth": 100}})
    assert (run_model(folder).k1, run_model(folder).b) == (0.9, 0.4)
    assert (run_model(computed).k1, run_model(computed).b) == (1.2, 0.75)
    assert run_model(RetrieverRun("bm25", "dl19", "imported", "imported run (mine.txt)", Path("x"), {})) is None
    assert run_model(RetrieverRun("tasb", "dl19", "imported", "imported full-corpus run (x)", Path("x"), {})) is None


def test_a_configured_full_corpus_index_is_used_and_not_partial(tiny_index, monkeypatch):
    from pipeline.predict.index_stats import open_index, resolve_index

    monkeypatch.setenv("IRDASH_QPP_INDEX_MSMARCO_V1", str(tiny_index))
    choice = resolve_index("dl20")
    assert (choice.kind, choice.partial, choice.origin) == ("local", False, "env IRDASH_QPP_INDEX_MSMARCO_V1")
    assert resolve_index("dl21").partial  # MS MARCO v2's index is not configured
    stats = open_index(None, choice)
    assert not stats.as_dict()["partial"] and "full-corpus index" in stats.describe()
    assert not stats.as_dict()["pool"]


def test_an_index_folder_that_is_not_one_is_refused(tmp_path):
    from pipeline.predict.index_stats import resolve_index

    with pytest.raises(ValueError, match="not a Lucene index"):
        resolve_index("dl19", str(tmp_path))
    assert resolve_index("dl19", "prebuilt:msmarco-v1-passage").kind == "prebuilt"
    assert resolve_index("dl19").partial  # nothing configured: the data folder's passages
    assert resolve_index("dl19").pool  # ... built from these topics' pools


@pytest.mark.skipif(not (SHARED / "runs" / "run.bm25.dl19.txt").is_file(), reason="no shared TREC DL data")
def test_real_dl19_bm25_run():
    from pipeline.data.trec_io import read_run

    run = read_run(SHARED / "runs" / "run.bm25.dl19.txt")
    values = {v.predictor: v for v in catalog.post_retrieval_values("bm25", run, k=100)}
    assert len(values["sd@100"].values) == 43
    for qid, value in values["sd@100"].values.items():
        assert value == pytest.approx(np.std(list(run[qid].values()), ddof=0))  # top-100 run: the whole list
    assert all(v > 0 for v in values["nqc_listmean@100"].values.values())
    tops = values["top_score"].values
    assert all(tops[q] == max(run[q].values()) for q in tops)


def three_documents():
    """D1 = a a b, D2 = b c, D3 = a c c c; P_coll a 0.1, b 0.2, c 0.3; query "a"; scores 3, 2, 1."""
    from pipeline.predict import relevance_model as rm

    return rm.TopDocuments.build([{"a": 2, "b": 1}, {"b": 1, "c": 1}, {"a": 1, "c": 3}], [3.0, 2.0, 1.0], ["a"],
                                 {"a": 0.1, "b": 0.2, "c": 0.3})


def hand_relevance_model():
    lam, coll = 0.6, {"a": 0.1, "b": 0.2, "c": 0.3}
    docs = [{"a": 2, "b": 1}, {"b": 1, "c": 1}, {"a": 1, "c": 3}]
    models = [{w: lam * d.get(w, 0) / sum(d.values()) + (1 - lam) * coll[w] for w in coll} for d in docs]
    likelihood = [m["a"] for m in models]  # P(Q|D) of the one-term query
    weights = [x / sum(likelihood) for x in likelihood]
    p_r = {w: sum(wt * m[w] for wt, m in zip(weights, models)) for w in coll}
    return models, p_r, coll


def test_clarity_equals_a_hand_computation():
    from pipeline.predict import relevance_model as rm

    _, p_r, coll = hand_relevance_model()
    expected = sum(p_r[w] * math.log2(p_r[w] / coll[w]) for w in coll)
    assert rm.clarity(three_documents()) == pytest.approx(expected, rel=1e-12)
    one = rm.TopDocuments.build([{"a": 1}], [1.0], ["a"], {"a": 0.1})
    assert math.isnan(rm.clarity(one))  # a single document: undefined, not 0


def test_uef_equals_a_hand_computation():
    import statistics

    from pipeline.predict import relevance_model as rm

    models, p_r, _ = hand_relevance_model()
    rm_scores = [sum(p_r[w] * math.log(m[w]) for w in p_r) for m in models]
    similarity = statistics.correlation([3.0, 2.0, 1.0], rm_scores)
    assert rm.uef_similarity(three_documents()) == pytest.approx(similarity, rel=1e-9)
    assert rm.uef(rm.uef_similarity(three_documents()), 0.5) == pytest.approx(0.5 * similarity, rel=1e-9)
