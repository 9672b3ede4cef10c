"""Query-performance prediction for the failure study: do signals available before an answer is
generated or judged foresee H2R, H2G and H2J?

- ``pre_retrieval``: predictors from the query and an index's term statistics (query length, AvgIDF,
  MaxIDF, SCQ sum/avg/max, AvgICTF, SCS), one function each;
- ``post_retrieval``: predictors from a run's scores (sd@k, NQC@k, WIG@k, SMV@k, σ_max, top score),
  vectorised over a padded score matrix; NQC/WIG/SMV normalised by the corpus score of ``corpus_score``
  (the run's BM25 over the index's statistics) or, as the named list-mean variant, by the list's mean;
- ``relevance_model``: Clarity and UEF from the relevance model of the top k (the index's document vectors);
- ``llm_signals``: beyond retrieval, where the backend gives log-probabilities (the generator's mean
  token log-probability, the spread of the judge's expected grades), absent with a reason elsewhere;
- ``index_stats``: which Lucene index the statistics come from (full corpus or the partial passages);
- ``catalog``: every predictor by name, and their per-query values with what they were read from;
- ``evaluation``: each predictor against each task's per-query target (τ-b, r, Holm, AUC of the hard
  set, seeded bootstrap intervals, per dataset and pooled with the dataset as a stratum).
"""
