"""The jobs panel: a page's background jobs of one kind (``core.jobs.JobKind``), kept live.

One call per page: ``jobs_panel(view.STUDY, view.jobs_frame)``. The panel lists the page's jobs of that
kind, draws the other jobs that hold or wait for a resource (e.g. a training job holding the CPU slot),
the page's own jobs as ``table(job_list)`` draws them, and optionally each job's details, Cancel
buttons and the logs of failed jobs. It reruns every ``every`` s while one of the page's jobs is
queued or running (every ``idle_every`` s otherwise, so a job started from a shell shows up), starts
the worker for waiting jobs, and reruns the whole page when a job starts or ends, so what the page
shows beside the panel (the result a finished job wrote, a Start button disabled while one runs)
follows without a reload.

Why one panel: the panels were copied per page, and one drawn once (the Failure typology page's) read
"queued" for as long as the tab stayed open, and "No typology run yet" above it while the run had finished.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import streamlit as st

from core import jobs

OTHER_JOBS_COLUMNS = {"what": st.column_config.TextColumn(width="large"),
                      "why": st.column_config.TextColumn(width="large")}


def jobs_panel(kind: jobs.JobKind, table: Callable[[Sequence[jobs.Job]], Any], *,
               where: Mapping[str, Any] | None = None, limit: int = 10, columns: Mapping | None = None,
               details: Callable[[Sequence[jobs.Job]], None] | None = None, empty: str | None = None,
               cancel: bool | Callable[[jobs.Job], str] = False, failed_logs: int = 0, every: float = 3.0, idle_every: float = 10.0) -> None:
    """Draw the page's jobs of ``kind`` (the newest ``limit`` whose ``meta`` has the fields ``where``).

    ``table(job_list)``: the rows of the page's jobs table (a DataFrame or a list of dicts), drawn with
    ``columns`` as its column configuration; ``details(job_list)``: drawn under it (e.g. each job's
    whole progress line); ``empty``: said when the page has no such job yet; ``cancel``: a Cancel
    button per active job that names what it cancels, ``Cancel #id · <what>``: a function gives the short
    ``<what>`` (training: the loss and the fold), ``True`` the job's title (``typology h2r on dl19``);
    ``failed_logs``: the output of the newest failed jobs, in expanders.
    """
    where = dict(where or {})
    first = [kind.jobs(limit, **where)]  # drawn by the fragment's first run: listed once per page run
    seen = frozenset(j.id for j in first[0] if j.active)  # what this page run draws around the panel

    @st.fragment(run_every=every if seen else idle_every)
    def live_jobs_panel() -> None:
        others = jobs.resource_jobs(exclude_kind=kind.name)
        if others:
            st.caption("Other jobs holding or waiting for a resource")
            st.dataframe(others, hide_index=True, width="stretch", column_config=OTHER_JOBS_COLUMNS)
        job_list = first.pop() if first else kind.jobs(limit, **where)  # a refresh lists them anew
        jobs.keep_jobs_moving(job_list)
        if not job_list:
            if empty:
                st.info(empty)
        else:
            st.dataframe(table(job_list), hide_index=True, width="stretch", column_config=dict(columns or {}))
            if details is not None:
                details(job_list)
            if cancel:
                _cancel_buttons([j for j in job_list if j.active], cancel)
            for job in [j for j in job_list if j.status == "failed"][:failed_logs]:
                with st.expander(f"Job #{job.id} failed: {job.label}"):
                    st.code(job.log_tail or "(no output)", language=None)
        if frozenset(j.id for j in job_list if j.active) != seen:  # a job started or ended: the whole page
            st.rerun()

    live_jobs_panel()


def _cancel_buttons(active: Sequence[jobs.Job], tag) -> None:
    if not active:
        return
    cols = st.columns(min(len(active), 5))
    for i, job in enumerate(active):  # short labels (never cut); the full label on hover
        # a bare "Cancel #7" left the reader to match a number against the table to know what stops
        extra = tag(job) if callable(tag) else job.label
        cols[i % len(cols)].button(f"Cancel #{job.id}" + (f" · {extra}" if extra else ""), key=f"cancel-{job.id}",
                                   help=job.label, on_click=jobs.cancel, args=(job.id,))
