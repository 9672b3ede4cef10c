"""The "Difficulty-aware judging" section of the Difficulty-aware page: a stored aware-judge result's verdicts,
and per query the baseline, difficulty-aware and control-sentence labels beside NIST's with the prompt diff.
One call: ``aware_judge_section()``; the figures come from :mod:`pipeline.views.aware_judge`."""
from __future__ import annotations

import streamlit as st

from core import paths
from pages.panels.jobs import jobs_panel
from pages.panels.start_form import reason_job_fields, start_button
from pages.panels.stored_result import stored_result
from pipeline.aware.paired import rule_text
from pipeline.views import aware_judge as view
from pipeline.views import query as query_page


def aware_judge_section() -> None:
    st.header("Difficulty-aware judging")
    st.caption("The judge (UMBRELA's prompt) re-judges the H2J queries' pairs with one sentence naming the query's "
               "difficulty, and with a neutral statement of the same length in its place (the control sentence); "
               "control queries that are not hard get the same sentences. Disagreement with NIST is compared per "
               "query (lower is better).")
    with st.expander("Run a judging study (background job)", expanded=False):
        c = st.columns([1, 2, 3, 1, 1, 1])
        reason_job_fields(c, "aware_judge", "judge", view.JUDGE_FIELD.label, view.REASON_SOURCES)
        c[3].number_input(view.QUERIES_FIELD.label, value=0, key="aware_judge_max")  # checked on Start
        c[4].number_input(view.forms.PAIRS_PER_QUERY.label, value=view.study.DEFAULT_CAP, key="aware_judge_cap")
        start_button(c[5], view.AWARE_JUDGE, "aware_judge", lambda s: view.submit(
            s["aware_judge_dataset"], paths.data_folder("trec_dl"), judge=s["aware_judge_judge"],
            reasons=s["aware_judge_reasons"], max_queries=s["aware_judge_max"], cap=s["aware_judge_cap"]),
            busy_help="a judging study is running")
    jobs_panel(view.AWARE_JUDGE, view.jobs_frame, columns={"progress": st.column_config.TextColumn(width="large")})

    available = view.available()
    if not available:
        st.info("No aware-judge result yet. " + view.RUN_HELP)
        return
    left, right = st.columns([1, 3])
    dataset = left.selectbox("Dataset", list(available), format_func=str.upper, key="judge_dataset")
    files = available[dataset]

    def result_at(i: int) -> dict:
        return stored_result(view.load, files[i])

    index = right.selectbox("Result", range(len(files)), key="judge_result",
                            format_func=lambda i: view.result_label(files[i], result_at(i)))
    result = result_at(index)
    st.caption(view.provenance_line(result))
    warning = view.not_a_finding(result)
    if warning:
        st.warning(warning)
    st.markdown(view.primary_note(result))
    st.dataframe(view.verdict_frame(result), hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.3g")
                                for c in ("mean change", "Wilcoxon p", "permutation p", "Holm p", "sign test p",
                                          "κ change")})
    st.caption(f"{rule_text(result['rule'])} κ: {result['kappa_scales']['binary']}; "
               f"{result['kappa_scales']['graded']}.")

    qids = view.query_options(result)
    qid = st.selectbox(f"Query ({len(qids)} re-judged)", qids, key="judge_query",
                       format_func=lambda q: view.query_label(result, q))
    st.link_button("Open this query on the Query page", query_page.query_link(dataset, qid),
                   icon=":material/manage_search:")  # every store's view of it, the studies' hard sets included
    texts = view.sentences(result, qid)
    st.markdown("**Difficulty sentence**")
    st.text(texts["from"])  # reason names may be LLM-written: text, never markdown
    st.code(texts["difficulty"], language=None, wrap_lines=True)
    st.markdown("**Control sentence**")
    st.code(texts["control"], language=None, wrap_lines=True)
    st.dataframe(view.disagreement_frame(result, qid), hide_index=True)
    st.dataframe(view.labels_frame(result, qid), hide_index=True)
    with st.expander("What changed in the prompt (+ added, - removed), on the stored example pair", expanded=False):
        for arm in ("aware", "control_sentence"):
            st.markdown(f"**{view.ARM_COLUMNS[arm]}**")
            st.code(view.prompt_change(result, arm), language="diff", wrap_lines=True)
