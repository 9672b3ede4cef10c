"""Dashboard entry point: ``streamlit run app.py`` (or ``make run``).

Pages live in ``pages/`` (one file per page, named after its URL path; see ``pages/__init__.py`` for
the rule) and only lay out widgets; data and charts come from ``ltr.views`` and ``pipeline.views``.
Training runs in background jobs (``core.jobs``), never in this process, so closing the tab or
restarting the server does not stop it. One dashboard serves a store (cache folder): a second one on the
same store says where the first runs and shows nothing else (``core.dashboard_lock``).

To add a page: put ``pages/<url-path>.py`` beside the others (first statement ``use_app_navigation()``)
and add one ``st.Page`` line below, in the section it belongs to.
"""
import streamlit as st

from pages import refuse_second_dashboard

st.set_page_config(page_title="IR ranking-loss and query-failure lab", layout="wide")

navigation = st.navigation({
    "": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Learning to rank": [
        st.Page("pages/training.py", title="Training", icon=":material/model_training:"),
        st.Page("pages/results.py", title="Results", icon=":material/leaderboard:"),
    ],
    "Query failure": [
        st.Page("pages/hard-to-retrieve.py", title="Hard to retrieve", icon=":material/search_off:"),
        st.Page("pages/failure-overlap.py", title="Failure overlap", icon=":material/join_inner:"),
        st.Page("pages/failure-typology.py", title="Failure typology", icon=":material/category:"),
        st.Page("pages/annotate-reasons.py", title="Annotate reasons", icon=":material/rate_review:"),
        st.Page("pages/difficulty-aware-generation.py", title="Difficulty-aware generation", icon=":material/compare:"),
        st.Page("pages/predicting-failure.py", title="Predicting failure", icon=":material/query_stats:"),
        st.Page("pages/query.py", title="Query", icon=":material/manage_search:"),
    ],
    "Paper": [
        st.Page("pages/findings.py", title="Findings", icon=":material/fact_check:"),
    ],
})
refuse_second_dashboard()  # one dashboard per store: a second one says where the first runs, and stops here
navigation.run()
