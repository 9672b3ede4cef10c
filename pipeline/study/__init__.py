"""The study: composes the stages into results. ``run`` (configurations -> the study's sets and
figures), ``store`` (stored studies), ``typology_sources`` (the hard queries a typology run is induced
on) and, where present, ``result`` (the study result's types) and ``preference_reasons``.

May import every stage package (``data`` to ``prompting``), ``core`` and third-party libraries;
``pipeline.views``, ``pipeline.cli`` and the pages import it.
"""
