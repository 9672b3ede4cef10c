"""Judging and H2J: LLM and imported relevance judgments (``judgments``), their disagreement with NIST
per pair and per query (``h2j``), and the judge benchmark's figures (``benchmark``).

May import the packages above it (``data``, ``llm``, ``sets``, ``retrieval``, ``generation``), ``core``
and third-party libraries.
"""
