"""Failure overlap: the three failure sets (retrieve, generate, judge) of a study run and how they overlap."""
import streamlit as st

from core import paths
from pages import use_app_navigation
from pipeline import overlap_view as view

use_app_navigation()

REFRESH_SECONDS = 3.0

st.title("Failure overlap")
st.caption("Queries hard to retrieve (bottom nDCG@10), hard to generate (bottom BERTScore F1 of a zero-shot answer "
           "against the relevant passages) and hard to judge (top LLM/NIST disagreement), per configuration. "
           "Runs are background jobs (`python -m pipeline run`); this page reads what they wrote.")

with st.expander("Run the study (background job)"):
    folder = paths.data_folder("trec_dl")
    c = st.columns([1, 2, 2, 1, 1])
    dataset_to_run = c[0].selectbox("Dataset", ["dl19", "dl20", "dl21", "dl22"], key="run_dataset")
    generator = c[1].text_input("Generator (LLM spec)", value="auto",
                                help="auto, embedded, ollama:MODEL[@HOST] or openai:MODEL@BASE_URL")
    judge = c[2].text_input("LLM judge (LLM spec)", value="auto")
    cap = c[3].number_input("Pairs per query", min_value=1, max_value=500, value=view.DEFAULT_CAP,
                            help="LLM judge: judged pairs per query at most, stratified by grade")
    include_partial = st.checkbox("Score H2G for queries with only some relevant passages' texts",
                                  value=False, help="default: such queries are excluded from H2G and counted")
    busy = any(j.active for j in view.study_jobs())

    def queue() -> None:  # a callback: the rerun that follows already sees the job
        st.session_state["queued_study"] = view.submit_study(
            dataset_to_run, folder, generator=generator, judge_llm=judge, cap=int(cap),
            partial_references="include" if include_partial else "exclude")

    c[4].button("Start", on_click=queue, disabled=busy, help="a study run is active" if busy else None)
    if folder is None:
        st.caption("No TREC DL data folder is configured: the run falls back to ir_datasets (online only).")
    if "queued_study" in st.session_state:
        st.success(f"Queued job #{st.session_state.pop('queued_study')}.")


@st.fragment(run_every=REFRESH_SECONDS if any(j.active for j in view.study_jobs()) else None)
def jobs_panel() -> None:
    job_list = view.study_jobs()
    if not job_list:
        return
    st.dataframe(view.jobs_frame(job_list), hide_index=True)
    finished = {j.id for j in job_list if not j.active}
    known = st.session_state.setdefault("finished-study-jobs", finished)
    if finished - known:  # a study may have been written: rerun the page to list it
        st.session_state["finished-study-jobs"] = finished
        st.rerun()


jobs_panel()

datasets = view.study_datasets()
if not datasets:
    st.info("No study yet: start one above, or run `python -m pipeline run --dataset dl19` in a shell.")
    st.stop()

name = st.selectbox("Study", datasets, format_func=str.upper)
study = view.load_study(name, view.study_path(name).stat().st_mtime)
choices = view.components(study)
cols = st.columns(4)
picked = {key: cols[i].selectbox(key.capitalize(), choices[key]) for i, key in enumerate(choices)}
label = view.find_configuration(study, **picked)
if label is None:
    st.warning("This study has no such configuration.")
    st.stop()
config = study["configurations"][label]
if config.get("note"):
    st.warning(config["note"])
for warning in view.tie_warnings(study, label):
    st.warning(warning)
analysis = config["analysis"]

left, right = st.columns([3, 2])
with left:
    st.pyplot(view.venn_figure(analysis), clear_figure=True)
with right:
    st.dataframe(view.summary_frame(analysis), hide_index=True,
                 column_config={"value": st.column_config.NumberColumn(format="percent")})
    st.dataframe(view.regions_frame(analysis).drop(columns=["key"]), hide_index=True,
                 column_config={"share of all": st.column_config.NumberColumn(format="percent")})
st.subheader("Pairwise overlaps")
st.dataframe(view.pairwise_frame(analysis), hide_index=True,
             column_config={c: st.column_config.NumberColumn(format="%.3g")
                            for c in ("expected if independent", "Jaccard", "share of first", "share of second",
                                      "p (hypergeometric, ≥)")})
for line in view.provenance_lines(study, label) + view.set_lines(study, label):
    st.caption(line)

st.subheader("Queries in a region")
regions = view.regions_frame(analysis)
region = st.radio("Region", regions["key"].tolist(), horizontal=True,
                  format_func=lambda k: f"{view.region_label(k)} ({analysis['regions'][k]['count']})")
queries = view.region_queries(study, label, region)
st.dataframe(queries, hide_index=True,
             column_config={c: st.column_config.NumberColumn(format="%.4f")
                            for c in ("nDCG@10", "BERTScore F1", "disagreement")})
if not queries.empty:
    qid = st.selectbox("Query", queries["qid"].tolist(),
                       format_func=lambda q: f"{q}: {study['queries'].get(q, '')}")
    detail = view.query_detail(study, label, qid)
    st.markdown("**Query**")
    st.text(detail["query"])
    st.markdown(f"**Generated answer** ({detail['answer_by']})")
    st.text(detail["answer"] if detail["answer"] is not None else "(no answer)")
    st.markdown(f"**Relevant passages (grade 2-3, with text): {len(detail['passages'])}**")
    for pid, text in list(detail["passages"].items())[:20]:
        st.caption(pid)
        st.text(text)

st.subheader("Stability across configurations")
st.dataframe(view.stability_frame(study), hide_index=True)
