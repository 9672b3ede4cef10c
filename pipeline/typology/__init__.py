"""The failure typology of the query-failure study (issue: LLM-induced typology + human validation).

- :mod:`.categories`: categories, typology JSON import, the study's ten categories;
- :mod:`.parse`: robust reading of JSON-ish model output;
- :mod:`.induction`: per-query reasons, refinement rounds with a defined stop rule, assignment;
- :mod:`.store`: every run, round, reason and assignment in ``cache/typology.sqlite``;
- :mod:`.runner`: one run end to end.
"""
