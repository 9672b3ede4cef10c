"""The cross-validation results table with paired significance tests (the study's main table), by concern.

- :mod:`ltr.report.runs`: which runs one table compares (configurations, loss variants, the tree baselines);
- :mod:`ltr.report.paired`: the seed-averaged paired t-test over test queries (Holm across the baselines);
- :mod:`ltr.report.seeds`: seeds as a random effect beside it (the fold-level test, a mixed model over
  (query, seed) differences) and the top group;
- :mod:`ltr.report.archive`: every run's per-query NDCG as a compressed CSV, and the tests recomputed from it;
- :mod:`ltr.report.text`: the table as text, CSV, LaTeX, captions and notes.
"""
