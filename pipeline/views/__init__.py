"""Page helpers, one module per page and named after it (``pages/failure-overlap.py`` ->
``failure_overlap``; like ``ltr.views``): tables, figures, job submission and page state, never ``streamlit``
itself: ``hard_to_retrieve``, ``failure_overlap``, ``failure_typology``, ``annotate_reasons`` (the Annotate
page's state), ``difficulty_aware_generation`` and ``predicting_failure``; ``venn``, ``forms`` and
``h2g_samples`` (H2G's sampling noise: Failure overlap and Query) serve several of them. A page imports its own module as ``view`` (``from pipeline.views import failure_overlap as
view``) and another page's under its own name.

May import ``pipeline.study`` and every stage package, ``core`` and third-party libraries; only
``pages/`` and ``app.py`` import it (never a CLI module: ``tests/meta/test_import_rules.py``).
"""
