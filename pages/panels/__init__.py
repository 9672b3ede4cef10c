"""Parts several pages draw the same way (Streamlit code, imported by pages only): ``jobs`` (the jobs panel).

A package, not a module of ``pages/``: every ``pages/*.py`` file is a page of app.py's navigation.
"""
