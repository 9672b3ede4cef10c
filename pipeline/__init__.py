"""The query-failure study over TREC DL 2019-2022 (``python -m pipeline``).

Stage packages, in the order a reader meets them; a package imports only packages above it (plus
``core``, the standard library and third-party libraries), checked by ``tests/meta/test_import_rules.py``:

1. ``stats``: statistics of the pipeline's own (the one Cohen's kappa), importing no stage
2. ``data``: TREC DL files, the dataset registry, loading, coverage
3. ``llm``: one chat interface, its backends (``llm.specs`` names them), the response cache
4. ``sets``: the one hard-set rule (``sets.rule``) and the overlap figures of given sets
5. ``retrieval``: BM25 and dense runs, imported runs, evaluation, H2R
6. ``generation``: answers and BERTScore, H2G's values
7. ``judging``: LLM and imported judgments, their disagreement with NIST (H2J), the judge benchmark
8. ``typology``: the failure typology (categories, induction, assignment, store)
9. ``annotation``: human annotation of the typology and its validation
10. ``prompting``: difficulty-aware prompts, the pairwise judge, the preference experiment
11. ``study``: composes the stages (a study run, the stored studies, the typology's hard queries)
12. ``predict``: query-performance predictors and how well they foresee each task's failure
13. ``findings``: the paper's claims checked on the stored studies, annotations and preference results
14. ``export``: publication files (SVG/PDF/PNG figures, CSV and booktabs LaTeX tables, a manifest)
15. ``views``: page helpers, one module per page (no ``streamlit``)
16. ``cli``: the command line

``pages/`` import ``pipeline.views`` (and ``pipeline.study`` for a constant or error type); the
contract of every module is in ``docs/ARCHITECTURE.md``.
"""
