"""Hard to retrieve: per-query NDCG@10 of each retriever on a TREC DL year and its bottom-quantile queries."""
import streamlit as st

from core.errors import DatasetError
from pipeline.views import hard_to_retrieve as view
from pipeline.views import query as query_page
from pages import use_app_navigation
from pages.panels.jobs import jobs_panel

use_app_navigation()

REFRESH_SECONDS = 3.0

st.title("Hard to retrieve")
st.caption("Queries whose NDCG@10 falls in the bottom quantile of a retriever's per-query NDCG@10 over the "
           "judged TREC DL queries (H2R), per retriever and under all of them. Next in this section: hard to "
           "generate (answers generated per query), hard to judge (LLM judges against NIST), the Venn overlap "
           "of the three sets, and a typology of the queries that fail.")

folder, problem = view.data_folder_status()
if folder is None:
    st.warning(problem)
    st.info(view.CONFIG_HELP)
    st.stop()


@st.cache_resource(max_entries=4, show_spinner="Loading topics, qrels and passages…")
def dataset(name: str, folder: str):
    return view.load(name, folder)  # shared, never copied: it holds the passage texts


@st.cache_resource(max_entries=8, show_spinner="Reading run files…")
def runs(name: str, folder: str, sources: tuple):
    return view.load_runs(dataset(name, folder), sources)


@st.cache_data(max_entries=32, show_spinner="Scoring runs (ir_measures)…")
def report(name: str, folder: str, sources: tuple, selected: tuple, quantile: float):
    loaded, _ = runs(name, folder, sources)
    return view.h2r(dataset(name, folder), [r for r in loaded if r.name in selected], quantile)


name = st.selectbox("Dataset", view.DATASET_NAMES, format_func=str.upper)
st.caption(f"Data folder: `{folder}`")
try:
    data = dataset(name, str(folder))
except (DatasetError, OSError, ValueError) as exc:
    st.error(" ".join(str(exc).split()))
    st.stop()

st.subheader("Coverage")
st.dataframe(view.coverage_frame(data), hide_index=True,
             column_config={"share": st.column_config.ProgressColumn("share", min_value=0.0, max_value=1.0,
                                                                     format="percent")})
for line in view.coverage_warnings(data):
    st.warning(line)

st.subheader("Retrievers")
sources = tuple(view.run_sources(data))
loaded, problems = runs(name, str(folder), sources)
for line in problems:
    st.error(line)
if loaded:
    st.dataframe(view.retriever_frame(data, loaded), hide_index=True)
else:
    st.info("No run for this dataset yet: neither the data folder's runs/ nor the cache holds one.")

with st.expander("Compute a run here (background job, partial corpus)"):
    st.caption(f"Runs `python -m pipeline retrieve` over this folder's {len(data.passages):,} passages. The run is "
               "listed above once the job has finished.")
    left, right = st.columns([1, 3])
    retriever = left.selectbox("Retriever", view.COMPUTABLE, help="dense = TAS-B when loadable, else MiniLM")
    busy = any(j.active and j.meta.get("retriever") == retriever for j in view.RETRIEVAL.jobs(dataset=name))

    def queue() -> None:  # a callback, so the rerun that follows already sees the job (and disables the button)
        st.session_state["queued_retrieval"] = view.RETRIEVAL.submit(dataset=name, retriever=retriever, folder=folder)

    right.button("Compute", on_click=queue, disabled=busy or not data.passages,
                 help="already queued or running" if busy else None)
    if "queued_retrieval" in st.session_state:
        st.success(f"Queued job #{st.session_state.pop('queued_retrieval')}.")


jobs_panel(view.RETRIEVAL, view.jobs_frame, where={"dataset": name}, failed_logs=2, every=REFRESH_SECONDS,
           columns={"message": st.column_config.TextColumn(width="large")})

if not loaded or not data.has_qrels:
    st.stop()

st.subheader("Hard-to-retrieve queries")
left, right = st.columns([3, 1])
names = [r.name for r in loaded]
selected = left.multiselect("Retrievers", names, default=view.default_selection(loaded),
                            help="Full-corpus (imported) runs are selected by default; runs computed here search a "
                                 "partial corpus and are compared with them only when you add them.")
quantile = right.slider("Quantile", min_value=0.05, max_value=0.5, value=0.25, step=0.05,
                        help="H2R: NDCG@10 ≤ the q-th quantile of the retriever's per-query NDCG@10 (ties included)")
if not selected:
    st.info("Choose at least one retriever.")
    st.stop()
result = report(name, str(folder), sources, tuple(selected), round(float(quantile), 4))
mixed = view.mixed_corpus_warning([r for r in loaded if r.name in selected])
if mixed:
    st.warning(mixed)

st.dataframe(view.summary_frame(result), hide_index=True,
             column_config={c: st.column_config.NumberColumn(format="%.4f")
                            for c in ("mean NDCG@10", "threshold", "H2R mean NDCG@10")}
             | {"share": st.column_config.NumberColumn(format="percent")})
for warning in view.tie_warnings(result):
    st.warning(warning)
if len(selected) > 1:
    label = view.intersection_label(result)
    st.metric(label.capitalize(), f"{len(result['intersection'])} queries")
    st.caption(f"{label}: " + (", ".join(result["intersection"]) or "none"))

st.dataframe(query_page.with_query_links(view.per_query_frame(data, result), name), hide_index=True,
             column_config={c: st.column_config.NumberColumn(format="%.4f")
                            for c in (f"NDCG@10 · {n}" for n in selected)}
             | {query_page.LINK_COLUMN: st.column_config.LinkColumn(display_text=query_page.LINK_TEXT)})

st.plotly_chart(view.sorted_figure(result, data.topics), key="h2r_sorted")
if len(selected) > 1:
    cx, cy = st.columns(2)
    x = cx.selectbox("x axis", selected, index=0)
    y = cy.selectbox("y axis", selected, index=1)
    if x != y:
        st.plotly_chart(view.scatter_figure(result, data.topics, x, y), key="h2r_scatter")
st.caption(f"Rule: {result['rule']}. Every retriever is scored over the same {len(data.judged_qids)} judged "
           "queries; a query missing from a run scores 0 (trec_eval -c).")
