"""Difficulty-aware generation: baseline and difficulty-aware answers side by side, with the judge's verdicts."""
import streamlit as st

from core import paths
from pages import use_app_navigation
from pages.panels.aware_judge import aware_judge_section
from pages.panels.aware_retrieve import aware_retrieve_section
from pages.panels.jobs import jobs_panel
from pages.panels.start_form import start_button
from pages.panels.stored_result import stored_result
from pipeline.views import difficulty_aware_generation as view
from pipeline.views import query as query_page

use_app_navigation()

st.title("Difficulty-aware generation")
st.caption("Each hard query is answered twice: with the zero-shot prompt (baseline) and with the same prompt plus "
           "one sentence naming its difficulty, written from its assigned failure reason. A pairwise judge sees the "
           "query, the highly relevant passages and both answers, in both orders; a pair whose two verdicts "
           "disagree is a tie.")

with st.expander("Run a comparison (background job)", expanded=not view.available()):
    folder = paths.data_folder("trec_dl")
    c = st.columns([1, 2, 2, 2, 1, 1])
    c[0].selectbox("Dataset", ["dl19", "dl20", "dl21", "dl22"], key="prefer_dataset")
    c[1].text_input("Generator (LLM spec)", "auto", key="prefer_generator",
                    help="auto, embedded, ollama[:MODEL[@HOST]], openai:MODEL@URL")
    c[2].text_input("Pairwise judge (LLM spec)", "auto", key="prefer_judge",
                    help="a model other than the generator; the same one only with the box below ticked")
    c[3].selectbox("Reasons", list(view.REASON_SOURCES), format_func=view.REASON_SOURCES.get, key="prefer_reasons")
    c[4].number_input(view.forms.PREFERENCE_QUERIES.label, value=10, key="prefer_max")  # checked on Start
    st.checkbox("Let the judge judge its own answers (the result says so)", value=False, key="prefer_self_judging")

    def queue_preference(s) -> int:  # the Start button's callback reads the form's widgets
        return view.submit_preference(s["prefer_dataset"], folder, generator=s["prefer_generator"],
                                      judge=s["prefer_judge"], reasons=s["prefer_reasons"], max_queries=s["prefer_max"],
                                      allow_self_judging=bool(s.get("prefer_self_judging")))

    start_button(c[5], view.PREFERENCE, "prefer", queue_preference, busy_help="a comparison is running")

jobs_panel(view.PREFERENCE, view.jobs_frame, columns={"progress": st.column_config.TextColumn(width="large")})



def preference_results() -> None:
    """The stored preference results (returns early, never st.stop(): the sections below it still draw)."""
    available = view.available()
    if not available:
        st.info("No preference result yet. " + view.RUN_HELP)
        st.subheader("The study's figures")
        st.dataframe(view.study_frame(), hide_index=True,
                     column_config={"study rate": st.column_config.NumberColumn(format="percent")})
        return

    def result_for(dataset: str, index: int = 0) -> dict:
        path = available[dataset][index]
        return stored_result(view.load, path)

    # ---------------------------------------------------------------------------- summary
    st.subheader("Preference rates next to the study's")
    by_configuration = view.configurations({name: [(p, result_for(name, i)) for i, p in enumerate(paths)]
                                            for name, paths in available.items()})
    chosen = st.selectbox("Configuration", list(by_configuration), key="summary_configuration",
                          help="results are compared across datasets only within one configuration (judge, generators, "
                               "settings, typology, templates); the newest result of each dataset in it")
    latest = by_configuration[chosen]
    by = st.radio("Rows", ["overall", "task", "category"], horizontal=True, key="summary_by",
                  help="per dataset, or per dataset and task / category")
    table = view.summary_frame(latest, by)
    st.plotly_chart(view.summary_figure(view.summary_frame(latest)), key="preference_summary")
    percent = st.column_config.NumberColumn(format="percent")
    st.dataframe(table, hide_index=True,
                 column_config={c: percent for c in ("preference rate", "CI low", "CI high", "verdict rate",
                                                     "inconsistent share", "study rate")}
                 | {"sign test p": st.column_config.NumberColumn(format="%.3g")})
    st.download_button("Download CSV", view.csv_bytes(table), file_name=f"preference-{by}.csv", mime="text/csv", on_click="ignore")
    study = view.study_frame()
    st.caption(f"Study: {', '.join(f'{d} {r:.2%}' for d, r in zip(study['dataset'], study['study rate']))} "
               f"({view.STUDY_NOTE}). {view.RULES_NOTE}")
    st.caption(view.RULES_IN_FULL)

    # ---------------------------------------------------------------------------- one pair
    st.subheader("Side by side")
    left, middle, right = st.columns([1, 2, 2])
    dataset = left.selectbox("Dataset", list(available), format_func=str.upper, key="pref_dataset")
    paths = available[dataset]
    index = middle.selectbox("Result", range(len(paths)), key="pref_result",
                             format_func=lambda i: view.result_label(paths[i], result_for(dataset, i)))
    result = result_for(dataset, index)
    group = right.selectbox("Task or category", view.group_options(result), key="pref_group")
    warning = view.small_model_warning(result)
    if warning:
        st.warning(warning)
    outcome_filter = st.radio("Show", view.OUTCOME_FILTERS, horizontal=True, key="pref_filter")
    pairs = view.select_pairs(result, group, outcome_filter)
    if not pairs:
        st.info("No pair matches these filters.")
        return
    by_key = {view.pair_key(p): p for p in pairs}
    keys = list(by_key)
    if st.session_state.get("pref_pair") not in by_key:
        st.session_state["pref_pair"] = keys[0]

    def step(offset: int) -> None:
        st.session_state["pref_pair"] = view.neighbour(keys, st.session_state["pref_pair"], offset)

    back, choice, forward = st.columns([1, 8, 1], vertical_alignment="bottom")
    back.button("Previous", on_click=step, args=(-1,), use_container_width=True)
    choice.selectbox(f"Query ({len(keys)} pairs)", keys, key="pref_pair", format_func=lambda k: view.pair_label(by_key[k]))
    forward.button("Next", on_click=step, args=(1,), use_container_width=True)
    pair = by_key[st.session_state["pref_pair"]]

    st.markdown(f"**Outcome:** {view.outcome_line(pair)}")
    st.dataframe(query_page.with_query_links(view.pair_details_frame(pair, result), dataset), hide_index=True,
                 column_config={query_page.LINK_COLUMN: st.column_config.LinkColumn(
                     display_text=query_page.LINK_TEXT)})  # reasons may be LLM-written: text cells
    st.code(pair["query"], language=None, wrap_lines=True)
    st.markdown("**Difficulty sentence**")
    st.code(pair["difficulty"], language=None, wrap_lines=True)
    columns = st.columns(2)
    for column, side in zip(columns, ("baseline", "aware")):
        with column:
            st.markdown(f"**{view.SIDE_TITLES[side]}**")
            st.caption(f"Generator: {result['generators'][side]['label']}")
            st.code(view.answer_text(pair, side), language=None, wrap_lines=True)
    with st.expander("What changed in the prompt (+ added, - removed)", expanded=True):
        st.code(view.prompt_change(pair), language="diff", wrap_lines=True)
    st.markdown("**Verdicts in both orders**")
    st.dataframe(view.verdict_frame(pair), hide_index=True)
    st.markdown(f"**Highly relevant passages shown to the judge** ({len(pair['passages'])}, capped at "
                f"{result['config']['max_passages']}, truncated at {result['config']['passage_chars']} characters)")
    st.dataframe(view.passages_frame(pair), hide_index=True, column_config={"text": st.column_config.TextColumn(width="large")})


preference_results()
aware_judge_section()
aware_retrieve_section()
