"""Home: what to do first, in order (a button to each step's pages), what the two studies are, which data is
available, where training runs, what the store holds."""
import streamlit as st

from ltr.views import home as view
from ltr.views import reader
from pages import navigation_section, use_app_navigation

use_app_navigation()

st.title("IR ranking-loss and query-failure lab")

with reader.session_store(st.session_state) as store:
    summary = view.store_summary(store)
folder, status = view.trec_dl_status()

st.subheader("Start here")
navigation = {page: (title, icon) for section in ("", "Learning to rank", "Query failure", "Paper")
              for page, title, icon in navigation_section(section)}  # titles and icons live in app.py
for number, step in enumerate(view.first_steps(summary, folder, status == "found"), start=1):
    st.markdown(f"**{number}. {step.title}**" + (f" · done: {step.done}" if step.done else ""))
    st.markdown(step.what)
    if step.needs_trec_dl and status != "found":
        st.caption("Needs the TREC DL folder (step 3).")
    for column, page in zip(st.columns(max(len(step.pages), 1) + 2), step.pages):
        title, icon = navigation[page]
        column.page_link(page, label=title, icon=icon)

st.divider()
left, right = st.columns(2)
with left:
    st.subheader("Learning to rank: LearnDCG")
    st.markdown(
        "LearnDCG is ApproxNDCG with a **learnable** gain base $b_g$, discount base $b_d$ and "
        "temperature $\\alpha$, trained jointly with the ranker. The study compares it with ten other "
        "ranking losses and four neural rankers on LETOR data sets (5-fold cross-validation), reports "
        "NDCG@{1,3,5,10}, training cost and paired t-tests, and follows where $\\theta_d$ ends on each "
        "fold (plotted with its gradient, so drift can be told apart from learning).")
with right:
    st.subheader("Query failure: TREC DL 2019-2022")
    st.markdown(
        "Which queries are hard to **retrieve** (BM25 and dense retrieval fail), hard to **generate** "
        "answers for, and hard to **judge**, and how these sets overlap across the TREC Deep Learning "
        "tracks 2019-2022.")

st.divider()
device_col, runs_col, jobs_col = st.columns(3)
device_slot = device_col.empty()  # filled last: the first torch import takes seconds
runs_col.metric("Runs in the store", summary["total"])
runs_col.caption(" · ".join(f"{summary[s]} {s}" for s in ("completed", "running", "failed", "cancelled", "pending")))
active = view.active_job_count()
jobs_col.metric("Background jobs queued or running", active)

st.subheader("Data sets")
st.dataframe(view.dataset_overview(), hide_index=True, width="stretch")
st.markdown(f"**TREC DL folder** (query-failure study): {status}")
if folder:
    st.code(folder, language=None)
st.caption("Real data folders are configured with IRDASH_DATA_<NAME> or the [data] table of irdash.toml "
           "(see core/paths.py). The synthetic presets need nothing: they are generated on first use.")
device_slot.metric("Training device", view.training_device())
