"""The Start form of a difficulty-aware job kind (the Difficulty-aware page's judging and retrieval sections share
it): the fields both kinds have, and the Start button.

``reason_job_fields(c, "aware_judge", "judge", "Judge (LLM spec)", REASON_SOURCES)`` draws the dataset, the
LLM spec and the reasons source into columns ``c[0:3]`` (keys ``aware_judge_dataset``, ``aware_judge_judge``,
``aware_judge_reasons``); ``start_button(column, KIND, "aware_judge", queue, busy_help=...)`` draws the
Start button keyed ``aware_judge_start``: disabled while a job of ``KIND`` is active, it calls
``queue(st.session_state)`` (the view's ``submit`` reading the form's widgets) in a callback, so the rerun that
follows already lists the job, then says "Queued job #N", or the form's error naming the field (a
``ValueError``: nothing was queued).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, MutableMapping

import streamlit as st

from core import jobs

DATASETS = ["dl19", "dl20", "dl21", "dl22"]
SPEC_HELP = "auto, embedded, ollama[:MODEL[@HOST]], openai:MODEL@URL"


def reason_job_fields(columns, key: str, spec: str, spec_label: str, sources: Mapping[str, str]) -> None:
    columns[0].selectbox("Dataset", DATASETS, key=f"{key}_dataset")
    columns[1].text_input(spec_label, "auto", key=f"{key}_{spec}", help=SPEC_HELP)
    columns[2].selectbox("Reasons", list(sources), format_func=sources.get, key=f"{key}_reasons")


def start_button(column, kind: jobs.JobKind, key: str, queue: Callable[[MutableMapping[str, Any]], int], *,
                 busy_help: str) -> None:
    busy = any(j.active for j in kind.jobs())
    queued, error = f"{key}_queued", f"{key}_error"

    def on_click() -> None:
        s = st.session_state
        try:
            s[queued] = queue(s)
        except ValueError as exc:  # core.fields.FormError names each bad field
            s[error] = str(exc)

    column.button("Start", on_click=on_click, disabled=busy, key=f"{key}_start", help=busy_help if busy else None)
    if queued in st.session_state:
        st.success(f"Queued job #{st.session_state.pop(queued)}.")
    if error in st.session_state:
        st.error(st.session_state.pop(error))
