"""Query: one query of one dataset across every store (studies, typology, annotations, predictions,
difficulty-aware pairs, judgments and rewrites), read as stored. Deep link: ``/query?dataset=dl19&qid=1037798``; the Failure
overlap, Failure typology and Predicting failure tables link here. Untrusted text (queries, passages,
answers, replies) is shown with ``st.text`` and in DataFrames, never as HTML or Markdown."""
import streamlit as st

from pages import use_app_navigation
from pipeline.views import h2g_samples
from pipeline.views import query as view

use_app_navigation()

VALUE = st.column_config.NumberColumn(format="%.4f")

st.title("Query")
st.caption("One query across every stored result: retrieval, generation, judging, the hard sets, the typology "
           "and its annotations, the predictors, and the difficulty-aware pairs, judgments and rewrites. Nothing is "
           "recomputed here.")

datasets = view.datasets()
wanted_dataset, wanted_qid = st.query_params.get("dataset"), st.query_params.get("qid")
if wanted_dataset and wanted_dataset not in datasets:
    if wanted_dataset in view.DATASETS:  # a link to a known dataset with no store yet: say what is missing below
        datasets = sorted({*datasets, wanted_dataset})
    else:  # a name no store or registry knows is never a folder to read
        st.warning(f"No store holds a dataset called {wanted_dataset!r}.")
        wanted_dataset = wanted_qid = None
if not datasets:
    st.info(f"No store holds a query yet: run a study on the Failure overlap page, or in a shell: "
            f"{view.first_study_hint()}.")
    st.stop()



@st.cache_data(max_entries=4, show_spinner="Reading the studies…")
def read_studies(name: str, files: tuple) -> list:  # keyed by the files' ids and mtimes (view.study_files)
    return view.stored_studies(name)


left, right = st.columns([1, 4])
dataset = left.selectbox("Dataset", datasets, format_func=str.upper,
                         index=datasets.index(wanted_dataset) if wanted_dataset in datasets else 0)
if dataset != wanted_dataset:
    wanted_qid = None  # the link's query is another dataset's: open this one's first query
stored = read_studies(dataset, view.study_files(dataset))
choices = view.query_choices(dataset, stored)
qids = list(choices)
if wanted_qid and wanted_qid not in choices:
    st.warning(f"No store of {dataset.upper()} holds query {wanted_qid!r}.")
    for line in view.missing_lines(dataset).values():
        st.caption(line)
    st.stop()
if not qids:
    st.info(f"No store of {dataset.upper()} holds a query.")
    st.stop()
qid = right.selectbox("Query", qids, index=qids.index(wanted_qid) if wanted_qid in qids else 0,
                      format_func=lambda q: f"{q}: {choices[q]}")
st.query_params.update({"dataset": dataset, "qid": qid})  # the address is this query's deep link

st.subheader("Query text")
st.text(f"{dataset.upper()} {qid}")
st.text(choices[qid])
missing = view.missing_lines(dataset)

found = view.studies_with(stored, qid)
st.header("Failure studies")
if not found:
    st.info(missing["study"])
else:
    by_id = {s.id: s for s in found}
    study = by_id[st.selectbox(f"Study ({len(found)} holding this query, newest first)", list(by_id))]
    st.caption(f"Study {study.id} · {study.source} · quantile {study.quantile} · universe {study.universe_rule}")
    for warning in view.small_model_warnings(study):
        st.warning(warning)

    st.subheader("Retrieval: nDCG@10 per retriever")
    st.dataframe(view.retrieval_frame(study, qid), hide_index=True, column_config={"nDCG@10": VALUE})
    for retriever in study.retrievers:
        frame, note = view.top_passages(study, retriever, qid)
        with st.expander(f"{retriever}: top {view.TOP_PASSAGES} passages"):
            st.caption(note)
            if not frame.empty:
                st.dataframe(frame, hide_index=True)

    st.subheader("Generation: answers and their BERTScore")
    st.dataframe(view.generation_frame(study, qid), hide_index=True, column_config={"BERTScore F1": VALUE})
    with st.expander("Reference passages (the study's grade-2/3 passages with text)"):
        st.dataframe(view.reference_frame(study, qid), hide_index=True)

    st.subheader("Judging: each judge's labels against NIST")
    judged, note = view.judging_frame(study, qid)
    st.caption(note)
    if judged.empty:
        st.info("No judge of this study labelled a passage of this query.")
    else:
        st.dataframe(judged, hide_index=True, column_config={"query's disagreement (stored)": VALUE})

st.subheader("Imported answers (data folder)")
imported, note = view.imported_answers_frame(dataset, qid)
st.caption(note)
if not imported.empty:
    st.dataframe(imported, hide_index=True)

st.header("Hard sets")
sets = view.hard_sets_frame(found, qid)
if sets.empty:
    st.info(missing["study"])
else:
    st.caption("Per stored study and configuration (retriever | generator | judge | setup): the study's three sets, "
               "drawn within the queries all three tasks score.")
    st.dataframe(sets, hide_index=True)

st.header("Hard to generate across samples")
noise = h2g_samples.query_frame(dataset, qid)
if noise.empty:
    st.info(h2g_samples.missing_line(dataset))
else:
    st.caption("This query's probability of being hard to generate: the share of one generator's samples of answers "
               "in which it is in H2G (each sample scored as the study scores one generator).")
    st.dataframe(noise, hide_index=True, column_config={"P(H2G)": st.column_config.NumberColumn(format="percent"),
                                                        **{c: VALUE for c in ("BERTScore mean", "sd", "min", "max")}})

st.header("Typology reasons")
reasons = view.typology_frame(dataset, qid)
if reasons.empty:
    st.info(missing["typology"])
else:
    st.dataframe(reasons, hide_index=True)
answers = view.annotations_frame(dataset, qid)
st.subheader("Annotators' answers")
if answers.empty:
    st.info(missing["annotations"])
else:
    st.dataframe(answers, hide_index=True)

st.header("Predictors")
predictors, computed_from = view.predictors_frame(dataset, qid)
if predictors.empty:
    st.info(missing["predictors"])
else:
    st.caption("Percentile: the share of the same prediction's values over this dataset's queries at or below "
               "this query's value.")
    st.dataframe(predictors, hide_index=True, column_config={"value": VALUE, "percentile": VALUE})
    for line in computed_from:
        st.caption(line)

st.header("Difficulty-aware pairs")
pairs = view.preference_pairs(dataset, qid)
if not pairs:
    st.info(missing["preference"])
for item in pairs:
    pair = item["pair"]
    with st.expander(f"{item['result']} · {pair['task'].upper()} · {pair['outcome']}"):
        st.caption(f"Judge {item['judge']} · baseline {item['baseline']} · aware {item['aware']} · {item['file']}")
        st.dataframe(item["details"], hide_index=True)  # reasons may be LLM-written: text cells
        st.text(view.outcome_line(pair))
        st.text("Prompt change:\n" + view.prompt_change(pair))
        base, aware = st.columns(2)
        base.markdown("**Baseline answer**")
        base.text(view.answer_text(pair, "baseline"))
        aware.markdown("**Difficulty-aware answer**")
        aware.text(view.answer_text(pair, "aware"))
        st.dataframe(view.verdict_frame(pair), hide_index=True)

st.header("Difficulty-aware judgments")
judgments = view.aware_judgments(dataset, qid, found)
if not judgments:
    st.info(missing["aware-judge"])
for item in judgments:
    with st.expander(f"{item['result']} · {item['groups'] or 'no group'}"):
        st.caption(f"Judge {item['judge']} · {item['file']}")
        if item["not_a_finding"]:
            st.warning(item["not_a_finding"])
        if item["own_h2j"]:
            st.info(item["own_h2j"])
        sentences = item["sentences"]
        st.text(f"Difficulty sentence ({sentences['from']}):\n{sentences['difficulty']}\n\n"
                f"Control sentence:\n{sentences['control']}")
        st.dataframe(item["disagreement"], hide_index=True)
        st.dataframe(item["labels"], hide_index=True)

st.header("Difficulty-aware rewrites")
rewrites = view.aware_rewrites(dataset, qid)
if not rewrites:
    st.info(missing["aware-retrieve"])
for item in rewrites:
    with st.expander(f"{item['result']} · rewriter {item['rewriter']}"):
        st.caption(item["corpus"])
        if item["not_a_finding"]:
            st.warning(item["not_a_finding"])
        st.text(f"Reason sentence: {item['sentence']}")
        st.dataframe(item["arms"], hide_index=True, column_config={"nDCG@10": VALUE})
