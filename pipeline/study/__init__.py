"""The study: composes the stages into results. ``task`` (the one failure-task interface: per-query
values with their direction, exclusions and provenance; ``values``: those types and their stored form),
``tasks`` (H2R, H2G, H2J behind it), ``config``
(the one study configuration), ``components`` (``NAME[=FILE]`` and the components' keys), ``run``
(configurations -> the study's sets and figures), ``result`` (the study result's types, with their JSON form), ``store`` (stored studies),
``sampling`` (H2G's sampling noise across several samples of one generator),
``typology_sources`` (the hard queries a typology run is induced on) and ``preference_reasons`` (the
reasons the preference experiment conditions on).

May import every stage package (``data`` to ``prompting``), ``core`` and third-party libraries;
``pipeline.views``, ``pipeline.cli`` and the pages import it.
"""
