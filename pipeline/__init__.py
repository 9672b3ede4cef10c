"""Query-failure study over TREC DL 2019-2022: data, retrieval, per-query NDCG, hard-to-retrieve sets.

Modules: ``trec_io`` (file formats), ``datasets`` (registry, loading, coverage), ``java`` (Java 21 for
pyserini), ``bm25`` and ``dense`` (retrievers), ``retrievers`` (imported vs computed runs with
provenance), ``evaluation`` (ir_measures), ``h2r`` (hard-to-retrieve sets), ``views``
(tables and figures for the dashboard pages), ``cli`` (``python -m pipeline``).
"""
