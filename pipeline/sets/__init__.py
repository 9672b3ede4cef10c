"""Hard sets and their overlap: the one hard-set rule of every task (``rule``) and the overlap figures of
given sets (``overlap``: Venn regions, Jaccard, hypergeometric p-values, stability).

May import ``pipeline.data`` and ``pipeline.llm`` (above it in the map of ``pipeline/__init__.py``), ``core``
and third-party libraries.
"""
