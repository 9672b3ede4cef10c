"""The query-failure study over TREC DL 2019-2022 (``python -m pipeline``).

Stage packages, in the order a reader meets them; a package imports only packages above it (plus
``core``, the standard library and third-party libraries), checked by ``tests/test_import_rules.py``:

1. ``data``: TREC DL files, the dataset registry, loading, coverage
2. ``llm``: one chat interface, its backends (``llm.specs`` names them), the response cache
3. ``sets``: the one hard-set rule (``sets.rule``) and the overlap figures of given sets
4. ``retrieval``: BM25 and dense runs, imported runs, evaluation, H2R
5. ``generation``: answers and BERTScore, H2G's values
6. ``judging``: LLM and imported judgments, their disagreement with NIST (H2J), the judge benchmark
7. ``typology``: the failure typology (categories, induction, assignment, store)
8. ``annotation``: human annotation of the typology and its validation
9. ``prompting``: difficulty-aware prompts, the pairwise judge, the preference experiment
10. ``study``: composes the stages (a study run, the stored studies, the typology's hard queries)
11. ``views``: page helpers, one module per page (no ``streamlit``)
12. ``cli``: the command line

``pages/`` import ``pipeline.views`` (and ``pipeline.study`` for a constant or error type); the
contract of every module is in ``docs/ARCHITECTURE.md``.
"""
