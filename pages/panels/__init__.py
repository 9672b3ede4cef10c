"""Parts several pages draw the same way (Streamlit code, imported by pages only): ``jobs`` (the jobs panel),
``start_form`` (a study's Start button), ``stored_result`` (a stored result file, cached per version).

A package, not a module of ``pages/``: every ``pages/*.py`` file is a page of app.py's navigation.
"""
