"""Failure overlap: the three failure sets (retrieve, generate, judge) of a study run and how they overlap."""
import streamlit as st

from core import paths
from pages import use_app_navigation
from pages.panels.jobs import jobs_panel
from pipeline.views import failure_overlap as view
from pipeline.views import h2g_samples
from pipeline.views import query as query_page

use_app_navigation()

REFRESH_SECONDS = 3.0
PERCENT = st.column_config.NumberColumn(format="percent")
P_VALUE = st.column_config.NumberColumn(format="%.3g")
VALUE = st.column_config.NumberColumn(format="%.4f")
QUERY_LINK = st.column_config.LinkColumn(display_text=query_page.LINK_TEXT)  # each row's Query page

st.title("Failure overlap")
st.caption("Queries hard to retrieve (bottom nDCG@10), hard to generate (bottom BERTScore F1 of a zero-shot answer "
           "against the relevant passages) and hard to judge (top LLM/NIST disagreement), per configuration. "
           "Runs are background jobs (`python -m pipeline run`); each configuration run on the same inputs is one "
           "stored study (a rerun that gives the same result stores nothing new).")

with st.expander("Run the study (background job)"):
    folder = paths.data_folder("trec_dl")
    c = st.columns([1, 2, 2])
    dataset_to_run = c[0].selectbox("Dataset", ["dl19", "dl20", "dl21", "dl22"], key="run_dataset")
    answers = view.imported_generators(dataset_to_run, folder)
    c[1].multiselect("Imported answers", answers, default=answers, key=f"run_answers-{dataset_to_run}",
                     help="the data folder's answers files (no LLM call; sizes from its models.tsv)")
    # no answers files: the LLM generator is the only one, auto by default
    c[2].text_input(view.forms.STUDY_GENERATOR.label, value="" if answers else "auto",
                    key=f"run_generator-{dataset_to_run}",
                    help="auto, embedded, ollama:MODEL[@HOST] or openai:MODEL@BASE_URL; leave empty to use only "
                         "imported answers")
    c = st.columns([1, 2, 2])
    choices = view.imported_judges(dataset_to_run, folder)
    c[1].multiselect("Imported judges", choices, default=choices, key=f"run_imported-{dataset_to_run}",
                     help="the data folder's judgments files; only the judges chosen here run")
    c[2].text_input(view.forms.STUDY_LLM_JUDGE.label, value="", key="run_llm_judge",
                    help="e.g. ollama:llama3.2:3b, embedded; leave empty to use only imported judges")
    c = st.columns([1, 1, 1])
    # no bounds on the number inputs: submit_study checks them and names a bad one (see core.fields)
    c[0].number_input(view.forms.PAIRS_PER_QUERY.label, value=view.DEFAULT_CAP, key="run_cap",
                      help="LLM judge: judged pairs per query at most, stratified by grade")
    c[1].number_input(view.forms.STUDY_QUERIES.label, value=0, key="run_max_queries",
                      help="only the first N judged queries in topic order (recorded with the study)")
    st.checkbox("Score H2G for queries with only some relevant passages' texts", value=False,
                key="run_include_partial", help="default: such queries are excluded from H2G and counted")
    st.checkbox("Take each quantile within the queries all three tasks score (universe common)", value=False,
                key="run_universe_common", help=f"default, universe {view.DEFAULT_UNIVERSE}: "
                                                 f"{view.UNIVERSE_HELP[view.DEFAULT_UNIVERSE]}")
    st.checkbox("Score H2G for answers cut at the token limit", value=False, key="run_include_truncated",
                help="default: answers that ran out of tokens (finish reason length) are excluded from H2G and counted")
    busy = any(j.active for j in view.STUDY.jobs())

    def queue() -> None:  # a callback (the rerun that follows already sees the job); reads the widgets' state
        s = st.session_state
        try:
            s["queued_study"] = view.submit_study(
                s["run_dataset"], folder, imported_generators=s.get(f"run_answers-{s['run_dataset']}", []),
                generator=s.get(f"run_generator-{s['run_dataset']}", ""),
                imported_judges=s.get(f"run_imported-{s['run_dataset']}", []), llm_judge=s["run_llm_judge"],
                cap=s["run_cap"], max_queries=s["run_max_queries"],
                partial_references="include" if s.get("run_include_partial") else "exclude",
                universe="common" if s.get("run_universe_common") else view.DEFAULT_UNIVERSE,
                truncated_answers="include" if s.get("run_include_truncated") else "exclude")
        except view.AlreadyStored as exc:
            st.session_state["queued_study_stored"] = (str(exc), exc.link)
        except ValueError as exc:
            st.session_state["queued_study_error"] = str(exc)

    c[2].button("Start", on_click=queue, disabled=busy, help="a study run is active" if busy else None)
    if folder is None:
        st.caption("No TREC DL data folder is configured: the run falls back to ir_datasets (online only).")
    if "queued_study" in st.session_state:
        st.success(f"Queued job #{st.session_state.pop('queued_study')}.")
    if "queued_study_error" in st.session_state:
        st.error(st.session_state.pop("queued_study_error"))
    if "queued_study_stored" in st.session_state:
        message, link = st.session_state.pop("queued_study_stored")
        st.info(message)
        st.link_button("Open the stored study", link)


def job_details(job_list) -> None:
    # the table's cells are narrow: the full progress and error lines below it, as text
    for job, line in view.job_lines(job_list):
        st.markdown(f"**Job #{job.id}** ({job.status})")
        if job.status == "running":
            st.progress(view.job_fraction(job))
        st.text(line)


jobs_panel(view.STUDY, view.jobs_frame, details=job_details, every=REFRESH_SECONDS,
           columns={"status": st.column_config.TextColumn(width="medium"),
                    "progress": st.column_config.TextColumn(width="large"),
                    "study": st.column_config.LinkColumn(display_text=r"study=(.*)$")})

datasets = view.study_datasets()
if not datasets:
    if any(j.active for j in view.STUDY.jobs()):
        st.info("A study is running (see its progress above); its results appear here when it finishes.")
    else:
        st.info(f"No study yet: start one above, or in a shell: {view.first_study_hint('dl19', folder)}.")
    st.stop()

wanted = st.query_params.get("dataset")
name = st.selectbox("Dataset", datasets, format_func=str.upper, key="study_dataset",
                    index=datasets.index(wanted) if wanted in datasets else 0)
listed = view.list_studies(name)
if not listed:
    st.info(f"No study of {name.upper()} is stored.")
    st.stop()
ids = [s["id"] for s in listed]
by_id = {s["id"]: s for s in listed}
wanted_study = st.query_params.get("study")
study_id = st.selectbox(f"Study ({len(ids)} stored, newest first)", ids, key=f"study-{name}",
                        index=ids.index(wanted_study) if wanted_study in ids else 0,
                        format_func=lambda i: view.study_label(by_id[i]))


@st.cache_data(max_entries=8, show_spinner="Reading the study…")
def load(dataset: str, sid: str, mtime: float) -> "view.StudyResult":
    return view.load_study(dataset, sid, mtime)


def study_of(sid: str) -> "view.StudyResult":
    from pathlib import Path

    return load(name, sid, Path(by_id[sid]["path"]).stat().st_mtime)


study = study_of(study_id)

with st.expander("Delete this study"):
    st.caption("Removes this study's stored results for good (the cached LLM answers and BERTScore pairs stay).")
    if st.button("Delete study…", key="delete-ask"):
        st.session_state["delete-pending"] = study_id
    if st.session_state.get("delete-pending") == study_id:
        st.warning(f"Delete study {study_id}? This cannot be undone.")
        yes, no = st.columns(2)
        if yes.button("Yes, delete it", key="delete-confirm", type="primary"):
            view.delete_study(name, study_id)
            st.session_state.pop("delete-pending", None)
            st.session_state.pop(f"study-{name}", None)
            st.query_params.clear()
            st.rerun()
        if no.button("Cancel", key="delete-cancel"):
            st.session_state.pop("delete-pending", None)
            st.rerun()

choices = view.components(study)
cols = st.columns(4)
picked = {key: cols[i].selectbox(key.capitalize(), choices[key]) for i, key in enumerate(choices)}
label = view.find_configuration(study, **picked)
if label is None:
    st.warning("This study has no such configuration.")
    st.stop()
config = study.configurations[label]
if config.note:
    st.warning(config.note)
for warning in [view.universe_warning(study, label), *view.tie_warnings(study, label)]:
    if warning:
        st.warning(warning)
analysis = config.analysis
universe = study.universe_summary(label)

region_key = f"region-{study_id}-{label}"
if region_key not in st.session_state:
    st.session_state[region_key] = view.VENN_ORDER[0]


def venn_clicked() -> None:  # a click inside a region selects it (the radio below follows)
    region = view.region_from_selection(st.session_state.get(f"venn-{region_key}", {}).get("selection"))
    if region is not None:
        st.session_state[region_key] = region


left, right = st.columns([3, 2])
with left:
    if view.has_hard_queries(analysis):
        st.plotly_chart(view.venn_plotly(analysis, st.session_state[region_key], universe), key=f"venn-{region_key}",
                        on_select=venn_clicked, selection_mode="points", config={"displayModeBar": False})
        st.download_button("Download the Venn diagram (PNG, matplotlib-venn)", view.venn_png(analysis, universe),
                           file_name=f"venn-{name}-{study_id}.png", mime="image/png", on_click="ignore")
    else:
        st.info("No configuration query is hard in any task: there is no diagram to draw.")
with right:
    st.dataframe(view.summary_frame(analysis), hide_index=True)
    if view.empty_sets(analysis):
        st.caption(view.empty_sets_note(analysis))
    st.dataframe(view.regions_frame(analysis).drop(columns=["key"]), hide_index=True,
                 column_config={"share of all": PERCENT})
st.subheader("Pairwise overlaps")
st.dataframe(view.pairwise_frame(analysis), hide_index=True,
             column_config={"expected if independent": st.column_config.NumberColumn(format="%.2f"),
                            "Jaccard": PERCENT, "share of first": PERCENT, "share of second": PERCENT,
                            "p (hypergeometric, ≥)": P_VALUE})
if view.further_note(analysis):  # a study with a further task (a three-task study shows nothing here)
    st.caption(view.further_note(analysis))
for line in view.provenance_lines(study, label) + view.set_lines(study, label):
    st.caption(line)

st.subheader("Queries in a region")
st.caption("Click a region of the diagram, or choose it here.")
regions = view.regions_frame(analysis)
region = st.radio("Region", regions["key"].tolist(), horizontal=True, key=region_key,
                  format_func=lambda k: f"{view.region_label(k)} ({analysis['regions'][k]['count']})")
queries = view.region_queries(study, label, region)
st.dataframe(query_page.with_query_links(queries, name), hide_index=True,
             column_config={query_page.LINK_COLUMN: QUERY_LINK,
                            **{c: VALUE for c in ("nDCG@10", "BERTScore F1", "disagreement")}})
if not queries.empty:
    qid = st.selectbox("Query", queries["qid"].tolist(),
                       format_func=lambda q: f"{q}: {study.queries.get(q, '')}")
    st.link_button("Open this query on the Query page", query_page.query_link(name, qid),
                   icon=":material/manage_search:")  # opens in its own tab
    detail = view.query_detail(study, label, qid)
    st.markdown("**Query**")
    st.text(detail["query"])
    st.markdown(f"**Generated answer** ({detail['answer_by']})")
    st.text(detail["answer"] if detail["answer"] is not None else "(no answer)")
    if detail["cut"]:
        st.text(f"({detail['cut']}: the model had not finished this answer)")
    with st.expander(view.passages_heading(detail) + ", highest grade first"):
        shown = detail["passages"]
        if len(shown) > view.PASSAGES_SHOWN and not st.checkbox(f"Show all {len(shown)}", key=f"all-{qid}"):
            shown = shown[:view.PASSAGES_SHOWN]
        for pid, grade, text in shown:
            st.caption(f"{pid} · grade {grade if grade is not None else 'unknown'}")
            st.text(text)

st.subheader("H2G sampling noise")
noise, noise_label = h2g_samples.result_for(name, picked["retriever"], picked["judge"], picked["setup"])
if noise is None:
    st.caption(h2g_samples.missing_line(name))
else:
    st.caption("The same retriever, judge and setup with H2G drawn from each sample of one generator in turn: how "
               "much the overlap moves when only the sample of answers changes (mean over the samples, range).")
    for line in h2g_samples.summary_lines(noise):
        st.caption(line)
    left, right = st.columns([3, 2])
    left.plotly_chart(h2g_samples.spread_venn(noise, noise_label), key=f"noise-venn-{noise['id']}-{noise_label}",
                      config={"displayModeBar": False})
    right.dataframe(h2g_samples.regions_frame(noise, noise_label, analysis), hide_index=True,
                    column_config={"mean": st.column_config.NumberColumn(format="%.2f")})
    right.dataframe(h2g_samples.pairs_frame(noise, noise_label), hide_index=True,
                    column_config={"mean over samples": st.column_config.NumberColumn(format="%.2f")})
    with st.expander("Each query's probability of being hard to generate"):
        st.dataframe(query_page.with_query_links(h2g_samples.probability_frame(noise), name), hide_index=True,
                     column_config={query_page.LINK_COLUMN: QUERY_LINK, "P(H2G)": PERCENT,
                                    **{c: VALUE for c in ("BERTScore mean", "sd", "min", "max")}})

st.subheader("Stability across configurations")
stability = view.stability_frame(study)
st.dataframe(stability, hide_index=True,
             column_config={"all three": PERCENT, **{c: P_VALUE for c in stability.columns if c.endswith(" p")}})

st.subheader("Compare with another study")
others = [i for i in ids if i != study_id]
if not others:
    st.caption("Only one study of this dataset is stored: run another to compare.")
else:
    other_id = st.selectbox("Second study", others, key=f"compare-{name}",
                            format_func=lambda i: view.study_label(by_id[i]))
    other = study_of(other_id)
    common = view.common_configurations(study, other)
    if label not in common:
        st.info("The second study has no configuration " + label + ("; shared ones: " + "; ".join(common)
                                                                   if common else "; it shares none with this one."))
    else:
        st.caption(f"Configuration {label}: first = {study_id}, second = {other_id}; difference = second - first.")
        frame = view.comparison_frame(study, other, label)
        shares, counts = frame[frame["kind"] == "share"], frame[frame["kind"] == "count"]
        left, right = st.columns(2)
        left.dataframe(counts.drop(columns=["kind"]), hide_index=True)
        right.dataframe(shares.drop(columns=["kind"]), hide_index=True,
                        column_config={c: PERCENT for c in ("first", "second", "difference")})
        st.dataframe(view.set_differences(study, other, label), hide_index=True, width="stretch")
