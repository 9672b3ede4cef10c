"""Difficulty-aware prompting: typology-tagged prompts and the shipped sentence templates
(``difficulty``, ``difficulty_sentences.json``), the pairwise preference judge (``pairwise``) and the
preference experiment (``preference``).

May import the packages above it (``data`` to ``annotation``), ``core`` and third-party libraries.
"""
