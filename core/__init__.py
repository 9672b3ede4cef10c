"""Shared core of both studies: paths and configuration, SQLite helpers, the background job runner.

Dependency direction is one-way: pages -> (ltr | pipeline) -> core. Nothing here imports streamlit,
ltr or pipeline.
"""
