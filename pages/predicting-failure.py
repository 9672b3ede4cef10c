"""Predicting failure: do query-performance predictors foresee which queries will be hard to retrieve,
generate and judge? Shows the results ``python -m pipeline predict`` stored; the page computes nothing
itself, its background jobs run that command."""
import streamlit as st

from pipeline.views import predicting_failure as view
from pipeline.views import query as query_page
from pages import use_app_navigation
from pages.panels.jobs import jobs_panel

use_app_navigation()

st.title("Predicting failure")
st.caption("Do the signals available before an answer is generated or judged (the query, the collection's "
           "statistics, the retrieval scores) foresee which queries fail retrieval (H2R), generation (H2G) and "
           "judgment (H2J)? Each predictor against each task's per-query values, over the queries that have both.")

folder = view.data_folder()
components = view.folder_components(folder)
with st.expander("Compute a prediction (background job)", expanded=not view.results()):
    if not components:
        st.info("No TREC DL data folder with runs or judgments is configured ([data] trec_dl in irdash.toml).")
    else:
        datasets = st.multiselect("Datasets", list(components), default=list(components)[:1], format_func=str.upper)
        runs, judges = view.shared_components(components, datasets)
        left, middle, right = st.columns(3)
        chosen_runs = left.multiselect("Runs (the data folder's, of every dataset chosen)", runs, default=runs)
        chosen_judges = middle.multiselect("Judges (the data folder's, of every dataset chosen)", judges, default=judges)
        setups = right.multiselect("Judging setups", view.SETUPS, default=["binary"])
        left, right = st.columns(2)
        generators = left.multiselect("Generators (the data folder's imported answers: their real H2G)",
                                      view.shared_answers(components, datasets), default=[])
        encoder = right.selectbox("BERTScore encoder", view.ENCODERS,
                                  index=view.ENCODERS.index(view.ceiling_encoder(datasets, generators)),
                                  disabled=not generators,
                                  help="an h2g-samples result scored with the same encoder gives the sampling ceiling")
        busy = any(j.active for j in view.PREDICTION.jobs())

        def queue() -> None:  # a callback: the rerun that follows already sees the job
            st.session_state["queued_prediction"] = view.PREDICTION.submit(
                datasets=datasets, retrievers=chosen_runs, judges=chosen_judges, setups=setups, folder=str(folder),
                generators=generators, encoder=encoder if generators else None)

        st.button("Compute", on_click=queue, disabled=busy or not datasets
                  or not (chosen_runs or chosen_judges or generators) or not setups, help="a prediction job is already queued or running" if busy else None)
        if "queued_prediction" in st.session_state:
            st.success(f"Queued job #{st.session_state.pop('queued_prediction')}.")
jobs_panel(view.PREDICTION, view.jobs_frame, failed_logs=2, columns={"message": st.column_config.TextColumn(width="large")})

entries = view.results()
if not entries:
    st.info("No prediction stored yet. Compute one from the command line, e.g. `" + view.EXAMPLE_COMMAND + "`.")
else:
    entry = st.selectbox("Result", entries, format_func=view.result_label)
    result = view.load(entry["id"])
    st.text(view.provenance_line(result))
    for warning in (view.partial_warning(result), view.small_model_warning(result)):
        if warning:
            st.warning(warning)
    for line in view.beside_lines(result):
        st.caption(line)
    for line in view.absent_lines(result):
        st.text("Not computed: " + line)
    scope = st.radio("Scope", view.scopes(result), horizontal=True, format_func=str.upper,
                     help="a dataset, or pooled over the datasets with the dataset as a stratum")
    st.caption(view.HEATMAP_NOTE)
    st.caption(view.AUC_CAPTION)
    event = st.plotly_chart(view.heatmap(result, scope), key=f"heatmap-{entry['id']}-{scope}", on_select="rerun",
                            selection_mode="points", config={"displayModeBar": False})
    cell = view.cell_from_selection(event.selection if event else None)
    if cell is None:
        st.text("Click a cell to see the predictor against the target per query.")
    else:
        predictor, target = cell
        st.subheader(f"{predictor} against {target}")
        frame = view.cell_frame(result, scope, predictor, target)
        st.plotly_chart(view.cell_scatter(frame, predictor, target), key=f"cell-{entry['id']}-{scope}")
        st.dataframe(query_page.with_query_links(frame, frame["dataset"]), hide_index=True,
                     column_config={query_page.LINK_COLUMN:
                                    st.column_config.LinkColumn(display_text=query_page.LINK_TEXT)})

    st.subheader("Table")
    table = view.table_frame(result, scope)
    st.dataframe(table, hide_index=True)
    full = view.table_frame(result)
    left, right = st.columns(2)
    left.download_button("Download CSV (every scope)", view.table_csv(full), file_name=f"predicting-failure-{entry['id']}.csv",
                         mime="text/csv", on_click="ignore")
    right.download_button("Download LaTeX (every scope)", view.table_latex(full, f"Predicting failure, {entry['id']}."),
                          file_name=f"predicting-failure-{entry['id']}.tex", mime="text/x-tex", on_click="ignore")
    ceiling = view.ceiling_frame(result, scope)
    if not ceiling.empty:
        st.subheader("The sampling ceiling of H2G")
        st.caption(view.CEILING_CAPTION)
        st.dataframe(ceiling, hide_index=True)
    for line in view.ceiling_lines(result, scope):
        st.caption(line)
    sweep = view.k_sweep_frame(result, scope)
    if not sweep.empty:
        st.subheader("τ per cut-off k")
        st.caption(view.K_SWEEP_NOTE)
        st.dataframe(sweep, hide_index=True)
