"""Difficulty-aware judging and retrieval: the failure paper's next step ("extending this approach to
retrieval and judgment conditioning"), beside difficulty-aware generation (:mod:`pipeline.prompting`).

``paired`` holds the statistics both studies share (per-query paired tests, Holm, the verdict rule),
``store`` their stored results; each study is a module of its own.
"""
