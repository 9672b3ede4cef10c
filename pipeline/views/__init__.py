"""Page helpers, one module per page (like ``ltr.views``): tables, figures, job commands and page state,
never ``streamlit`` itself: ``hard_to_retrieve``, ``overlap``, ``typology``, ``annotate`` (the Annotate
page's state) and ``preference``.

May import ``pipeline.study`` and every stage package, ``core`` and third-party libraries; only
``pages/`` and ``app.py`` import it (never a CLI module: ``tests/meta/test_import_rules.py``).
"""
