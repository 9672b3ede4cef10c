"""The failure reasons the difficulty-aware prompting is conditioned on, from one of three sources.

- ``reasons="typology"``: each task's latest finished failure-typology run of the dataset (its
  categories and assigned reasons; ``reasons_model`` picks the runs of one model);
- ``reasons=FILE``: imported assignments (a JSON list or JSONL of ``{"qid", "task", "categories"}``)
  against the typology of ``typology_file``;
- otherwise an LLM (``assigner``) assigns the typology's H2R categories to the H2R queries of
  ``retriever`` with the typology's own assignment (:func:`pipeline.typology.assignment.assign_reasons`,
  the query alone as context): the one hard set computable from the data folder alone (H2G and H2J
  need a generator or a judge first). Only the queries the preference step can use are asked about (a relevant
  passage with text; the first ``max_queries`` in topic order), so a capped run makes no call it
  would then drop.

The third element of the result says how the reasons were made (which store runs, which file, or
which model assigned them to which hard set under which rule), and goes into the preference result.
"""
from __future__ import annotations

from typing import Sequence

from core.jobs.progress import ProgressWriter
from pipeline.prompting import difficulty
from pipeline.typology.assignment import assign_reasons
from pipeline.typology.categories import load_typology


def preference_reasons(data, typology_file, *, reasons: str | None = None, reasons_model: str | None = None,
                       retriever: str = "bm25", quantile: float = 0.25, max_queries: int | None = None,
                       assigner: str = "auto", llm_options: dict | None = None, tasks: Sequence[str] | None = None,
                       progress: ProgressWriter | None = None) -> tuple:
    """``(typology, assignments, how they were made)`` for ``data`` (see the module docstring); with
    ``tasks``, only the assignments of those tasks. ``progress`` gets one stage (the assignment) when
    the reasons are assigned here. ``tasks`` without ``h2r`` and without ``reasons`` is refused before
    any call (an LLM assigns H2R reasons only: they would all be dropped)."""
    if not reasons and tasks and "h2r" not in tasks:
        # the LLM assigns H2R reasons only: every call would be dropped by the task filter below
        raise ValueError(f"--task {' '.join(tasks)}: without --reasons the reasons are assigned to the H2R hard "
                         "queries only, so none would be left; pass --reasons typology or --reasons FILE for other "
                         "tasks, or include --task h2r")
    typology, assignments, how = _reasons(data, typology_file, reasons, reasons_model, retriever, quantile,
                                          max_queries, assigner, llm_options, progress)
    if tasks:
        assignments = [a for a in assignments if a.task in tasks]
    return typology, assignments, how


def _reasons(data, typology_file, reasons, reasons_model, retriever, quantile, max_queries, assigner, llm_options,
             progress) -> tuple:
    from pipeline.retrieval.h2r import h2r_report
    from pipeline.llm import make_client
    from pipeline.retrieval.retrievers import get_run

    if reasons:
        return difficulty.given_reasons(data.name, reasons, typology_file, reasons_model,
                                        (llm_options or {}).get("stated_sizes"))
    typology = load_typology(typology_file)
    tracker = progress or ProgressWriter(None)
    run = get_run(data, retriever)
    report = h2r_report(data, [run], quantile=quantile)
    hard_qids = report["retrievers"][run.name]["hard"]  # NAME@computed when computed here
    usable = [qid for qid in data.judged_qids if qid in set(hard_qids) and data.relevant_passages(qid)]
    hard = {"h2r": usable[:max_queries] if max_queries else usable}
    client = make_client(assigner, **{**(llm_options or {}), "step": "prefer:assignment"})
    tracker.stage("assigning reasons to the H2R hard queries", len(hard["h2r"]), "query")
    assignments, assigned = assign_reasons(client, typology, data.topics, hard, on_progress=tracker.advance)
    return typology, assignments, {"assigned_by": client.provenance.as_dict(), "hard_sets": {
        "h2r": {"retriever": run.name, "quantile": quantile, "rule": report["rule"],
                "qids": hard_qids, "asked": hard["h2r"]}}, "tasks": assigned}
