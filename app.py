"""Dashboard entry point: ``streamlit run app.py`` (or ``make run``).

Pages live in ``app_pages/`` and only lay out widgets; data and charts come from ``ltr.views`` (and,
for the query-failure study, ``pipeline``). Training runs in background jobs (``core.jobs``), never
in this process, so closing the tab or restarting the server does not stop it.

The folder is deliberately not called ``pages/``: Streamlit treats a ``pages/`` folder beside the main
script as a legacy multipage app (its own sidebar; a page URL runs the page file without this
navigation, or flashes "Page not found" for a custom ``url_path``).
"""
import streamlit as st

st.set_page_config(page_title="IR ranking-loss and query-failure lab", layout="wide")

navigation = st.navigation({
    "": [st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Learning to rank": [
        st.Page("app_pages/ltr_training.py", title="Training", icon=":material/model_training:",
                url_path="training"),
        st.Page("app_pages/ltr_results.py", title="Results", icon=":material/leaderboard:", url_path="results"),
    ],
    "Query failure": [
        st.Page("app_pages/query_failure.py", title="Hard to retrieve", icon=":material/search_off:",
                url_path="hard-to-retrieve"),
        st.Page("app_pages/failure_typology.py", title="Failure typology", icon=":material/category:",
                url_path="failure-typology"),
        st.Page("app_pages/annotate_reasons.py", title="Annotate reasons", icon=":material/rate_review:",
                url_path="annotate-reasons"),
    ],
})
navigation.run()
