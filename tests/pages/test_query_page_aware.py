"""The Query page's difficulty-aware judging and retrieval sections (issue 36 §3: "its difficulty-aware pairs,
judgments and rewrites"), on results stored by the library itself (the Difficulty-aware page tests' scripted
judge and planted Lucene collection): what the page shows is what the stored result holds, untrusted text as
text, and a query no result holds gets the line saying how to make one."""
from __future__ import annotations

import pytest

from pipeline.views import aware_judge, query as view
from tests.pages.support import open_query_page
from tests.pipeline.aware import retrieve_collection as rc
from tests.support.aware_results import HOSTILE_REWRITE, judged_result, retrieved_result


def test_the_query_page_shows_the_stored_aware_judgments_of_a_query(cache):
    result = judged_result()  # dl19 q1..q8, q1 and q2 hard (binary); q1's text is hostile markup
    assert "dl19" in view.datasets() and set(view.query_choices("dl19")) >= {r["qid"] for r in result["queries"]}
    (item,) = view.aware_judgments("dl19", "q2")
    assert item["result"] == result["id"] and item["groups"].startswith("binary: hard")
    assert item["labels"].equals(aware_judge.labels_frame(result, "q2"))
    assert view.aware_judgments("dl19", "q-not-there") == []

    at = open_query_page(dataset="dl19", qid="q2")
    headers = [h.value for h in at.header]
    assert "Difficulty-aware judgments" in headers and "Difficulty-aware rewrites" in headers
    labels = [d.value for d in at.dataframe if "control sentence" in d.value.columns and "passage" in d.value.columns]
    assert len(labels) == 1 and labels[0].equals(aware_judge.labels_frame(result, "q2"))
    record = next(r for r in result["queries"] if r["qid"] == "q2")
    texts = [t.value for t in at.text]
    assert any(record["sentence"] in t and record["control_sentence"] in t for t in texts)
    assert any(w.value.startswith("Not a finding") for w in at.warning)  # a scripted tiny judge
    # q2 is hard for the result's own judge, and no stored study holds it: the page says why the table lacks it
    assert any(i.value.startswith("Hard to judge (binary, graded) for this result's own judge") and
               "no stored study holds this query" in i.value for i in at.info)
    assert any("python -m pipeline aware-retrieve --dataset dl19" in i.value for i in at.info)  # none stored


@pytest.mark.slow
def test_the_query_page_shows_a_querys_rewrites_beside_their_ndcg(cache, tmp_path):
    result = retrieved_result(tmp_path)  # dl20, partial corpus, a 1.5B rewriter whose aware rewrite is hostile HTML
    qid = rc.HARD[0]
    (item,) = view.aware_rewrites("dl20", qid)
    stored = next(r for r in result["queries"] if r["qid"] == qid)
    assert list(item["arms"]["nDCG@10"]) == [stored["ndcg@10"][arm] for arm in ("original", "plain_rewrite",
                                                                                 "aware_rewrite", "control_rewrite",
                                                                                 "rm3")]
    assert item["arms"]["query BM25 ran"].iloc[2] == HOSTILE_REWRITE and "partial corpus" in item["corpus"]

    at = open_query_page(dataset="dl20", qid=qid)
    (arms,) = [d.value for d in at.dataframe if "query BM25 ran" in d.value.columns]
    assert arms.equals(item["arms"])
    assert any(w.value.startswith("Not a finding: rewriter is a 1.5B") for w in at.warning)
    shown = [e.value for e in (*at.markdown, *at.caption, *at.warning, *at.info)]
    assert not any("<script>" in text for text in shown)
