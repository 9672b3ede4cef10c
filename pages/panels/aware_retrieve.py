"""The "Difficulty-aware retrieval" section of the Difficulty-aware page: a Start form for an ``aware-retrieve``
background job and its jobs, then a stored result's verdicts, the share leaving the bottom quartile, and the
rewrites side by side (helpers in ``pipeline.views.aware_retrieve``). Rewrites are LLM output: shown in DataFrame
cells, as text."""
from __future__ import annotations

import streamlit as st

from core import paths as folders
from pages.panels.jobs import jobs_panel
from pages.panels.start_form import reason_job_fields, start_button
from pages.panels.stored_result import stored_result
from pipeline.aware.paired import rule_text
from pipeline.views import aware_retrieve as view
from pipeline.views import query as query_page

QUERY_LINK = {query_page.LINK_COLUMN: st.column_config.LinkColumn(display_text=query_page.LINK_TEXT)}


def aware_retrieve_section() -> None:
    st.header("Difficulty-aware retrieval")
    st.caption("Each H2R query (bottom quartile of the original queries' nDCG@10 under BM25 over the data folder's "
               "passages) is rewritten by an LLM three times: with its assigned failure reason's sentence, with a "
               "neutral statement of the same length in its place (the control), and with neither. BM25 runs on each "
               "rewrite; RM3 on the original query is the classical reformulation.")
    with st.expander("Run a retrieval study (background job)", expanded=False):
        c = st.columns([1, 2, 3, 1, 1])
        reason_job_fields(c, "aware_retrieve", "rewriter", view.REWRITER_FIELD.label, view.REASON_SOURCES)
        c[3].number_input(view.QUERIES_FIELD.label, value=0, key="aware_retrieve_max")  # checked on Start
        start_button(c[4], view.AWARE_RETRIEVE, "aware_retrieve", lambda s: view.submit(
            s["aware_retrieve_dataset"], folders.data_folder("trec_dl"), rewriter=s["aware_retrieve_rewriter"],
            reasons=s["aware_retrieve_reasons"], max_queries=s["aware_retrieve_max"]),
            busy_help="a retrieval study is running")
    jobs_panel(view.AWARE_RETRIEVE, view.jobs_frame,
               columns={"progress": st.column_config.TextColumn(width="large")})

    paths = view.available()
    if not paths:
        st.info(view.RUN_HELP)
        return

    def result_at(i: int) -> dict:
        return stored_result(view.load, paths[i])

    index = st.selectbox("Retrieval result", range(len(paths)), key="aware_retrieve_result",
                         format_func=lambda i: view.result_label(result_at(i)))
    result = result_at(index)
    corpus = result["corpus"]
    (st.warning if corpus["partial_corpus"] else st.caption)(corpus["statement"])
    label = view.not_a_finding(result)
    if label:
        st.warning(label)
    st.caption(view.model_line(result))
    st.markdown(view.primary_note(result))
    st.dataframe(view.verdict_frame(result), hide_index=True,
                 column_config={"headline": st.column_config.TextColumn(width="large")})
    st.caption(rule_text(result["rule"]))
    st.dataframe(view.leaving_frame(result), hide_index=True,
                 column_config={"share": st.column_config.NumberColumn(format="percent")})
    st.caption(result["leave_rule"])
    st.dataframe(view.leaving_tests_frame(result), hide_index=True,
                 column_config={"p": st.column_config.NumberColumn(format="%.3g")})
    st.markdown("**Rewrites side by side**")
    st.dataframe(query_page.with_query_links(view.rewrites_frame(result), result["dataset"]), hide_index=True,
                 column_config=QUERY_LINK)  # each row opens its query on the Query page
    with st.expander("The rewriter's raw replies"):
        st.dataframe(query_page.with_query_links(view.raw_replies_frame(result), result["dataset"]), hide_index=True,
                     column_config=QUERY_LINK)
