"""The failure typology of the query-failure study (LLM-induced typology + human validation).

- :mod:`.categories`: the one domain model (``Category``, ``Typology``, ``Assignment``), typology JSON
  import, the study's ten categories (``study_typology.json``);
- :mod:`.parse`: robust reading of JSON-ish model output;
- :mod:`.context`: the task context a model sees per query;
- :mod:`.induction`: per-query reasons, refinement rounds with a defined stop rule;
- :mod:`.assignment`: the one reason-assignment procedure (typology runs and the preference step);
- :mod:`.degenerate`: an assignment that gives every category to every query, or none to any;
- :mod:`.store`: every run, round, reason and assignment in ``cache/typology.sqlite``;
- :mod:`.runner`: one run end to end.

May import the stage packages above it (``data``, ``llm``, ``sets``, ``retrieval``, ``generation``,
``judging``), ``core`` and third-party libraries; the hard queries a run is induced on come from
``pipeline.study.typology_sources``.
"""
