"""Generation and H2G's values: LLM or imported answers (``answers``) and their BERTScore against the
reference passages (``bertscore``).

May import ``pipeline.data``, ``pipeline.llm``, ``pipeline.sets``, ``pipeline.retrieval``, ``core`` and
third-party libraries.
"""
