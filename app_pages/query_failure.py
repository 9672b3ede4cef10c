"""Placeholder for the query-failure study's pages (they come with later issues)."""
import streamlit as st

from ltr import views

st.title("Query failure")
st.info("The query-failure pages are not built yet. They will show, for TREC DL 2019-2022, the queries "
        "that are hard to retrieve (BM25 and dense retrieval), hard to generate answers for and hard "
        "to judge, and how these sets intersect.")
folder, status = views.trec_dl_status()
st.markdown(f"**TREC DL folder**: {status}")
if folder:
    st.code(folder, language=None)
