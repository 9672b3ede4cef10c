"""Retrieval and H2R: Java for pyserini (``java``), BM25 and dense retrievers (``bm25``, ``dense``), imported
vs computed runs with provenance (``retrievers``), ir_measures evaluation (``evaluation``) and the
hard-to-retrieve sets (``h2r``, by the rule of ``pipeline.sets.rule``).

May import ``pipeline.data``, ``pipeline.llm``, ``pipeline.sets``, ``core`` and third-party libraries.
"""
