"""pipeline.views.query on the planted DL19 study (``tests.pipeline.planted_study``: BM25's and TAS-B's imported
runs, Llama-3.3-70B's imported binary judgments; skips without ../shared): what the Query page shows of each
query agrees with what measured it, for every query of the study."""
from __future__ import annotations

from pipeline.data import trec_io
from pipeline.views import query as view


def test_every_query_agrees_with_the_stored_study_and_the_reference(planted_cache):
    reference, data = planted_cache["reference"], planted_cache["data"]
    (study,) = view.stored_studies("dl19")
    qrels = trec_io.read_qrels(data / "qrels.dl19-passage.txt")
    run = trec_io.read_run(data / "runs" / "run.bm25.dl19.txt")
    for qid in study.queries:
        # per pair, the judge against NIST under the setup's rule: its share is the stored per-query disagreement,
        # and the independent reference's (planted_study counts the pairs of the two files itself)
        judged, _ = view.judging_frame(study, qid)
        assert set(judged["disagrees"]) <= {"yes", "no"}  # every labelled pair's NIST grade was found
        share = (judged["disagrees"] == "yes").mean()
        assert abs(share - study.judges["llama-3.3-70b"]["binary"].per_query[qid]) < 1e-12
        assert abs(share - reference["disagreement"][qid]) < 1e-12
        # BM25's top passages: the run file's order, graded from the qrels file
        top, note = view.top_passages(study, "bm25", qid)
        expected = sorted(run.get(qid, {}).items(), key=lambda kv: (-kv[1], kv[0]))[:view.TOP_PASSAGES]
        assert top["pid"].tolist() == [pid for pid, _ in expected]
        assert top["NIST grade"].tolist() == [str(qrels[qid][pid]) if pid in qrels[qid] else "unjudged"
                                              for pid, _ in expected]
        assert "qrels.dl19-passage.txt" in note
        retrieval = view.retrieval_frame(study, qid).set_index("retriever")
        assert abs(retrieval.loc["bm25", "nDCG@10"] - reference["ndcg"][qid]) < 1e-9
        # the hard sets of the BM25 configuration: the reference sets drawn by the one rule
        sets = view.hard_sets_frame([study], qid).set_index("configuration")
        row = sets.loc["bm25 | planted | llama-3.3-70b | binary"]
        assert (row["hard to retrieve (H2R)"], row["hard to judge (H2J)"]) == (qid in reference["h2r"],
                                                                              qid in reference["h2j"])
