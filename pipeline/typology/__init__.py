"""The failure typology of the query-failure study (issue: LLM-induced typology + human validation).

- :mod:`.categories`: the one domain model (``Category``, ``Typology``, ``Assignment``), typology JSON
  import, the study's ten categories;
- :mod:`.parse`: robust reading of JSON-ish model output;
- :mod:`.induction`: per-query reasons, refinement rounds with a defined stop rule;
- :mod:`.assignment`: the one reason-assignment procedure (typology runs and the preference step);
- :mod:`.store`: every run, round, reason and assignment in ``cache/typology.sqlite``;
- :mod:`.runner`: one run end to end.
"""
