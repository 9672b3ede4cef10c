"""One typology run end to end: induce (or import) a typology, assign reasons, store everything."""
from __future__ import annotations

from typing import Callable, Sequence

from core.jobs.progress import ProgressWriter
from pipeline.llm.base import ChatClient
from pipeline.typology.assignment import assign
from pipeline.typology.categories import Category
from pipeline.typology.induction import HardQuery, InductionConfig, Round, collect_reasons, induce_from_reasons
from pipeline.typology.store import TypologyStore, run_id_for


def typology_stages(config: InductionConfig, imported: bool) -> int:
    """The stages of a run's own work, at most: collecting reasons, each allowed induction round,
    assignment; an imported typology has only the assignment. (A run that converges early drops the
    rounds it did not need: :func:`run_typology` lowers the count then.)"""
    return 1 if imported else config.max_rounds + 2


def run_typology(client: ChatClient, store: TypologyStore, *, dataset: str, task: str,
                 queries: Sequence[HardQuery], hard_set: dict, config: InductionConfig = InductionConfig(),
                 imported: tuple[str, list[Category]] | None = None, force: bool = False,
                 on_round: Callable[[Round], None] | None = None, progress: ProgressWriter | None = None) -> dict:
    """Run (or return the stored result of) one typology run; ``imported = (label, categories)``
    skips induction. A finished run with the same id is returned as stored unless ``force``; an
    unfinished one is restarted, and the response cache replays the calls it had made.

    ``progress``: the job's progress record (:mod:`core.jobs.progress`), sized to include
    :func:`typology_stages`; each stage here is one :meth:`~ProgressWriter.stage` (items: hard
    queries). The caller ends the record (``with ProgressWriter(...)``), also on failure."""
    if not queries:
        raise ValueError(f"{dataset} {task}: the hard set is empty, nothing to explain")
    provenance = client.provenance.as_dict()
    run_id = run_id_for(dataset=dataset, task=task, hard_set=hard_set, provenance=provenance,
                        config=config.as_dict(), qids=[q.qid for q in queries],
                        imported=imported[1] if imported else None)
    existing = store.get_run(run_id)
    if existing and existing["status"] == "done" and not force:
        return store.result(run_id)
    store.start_run(run_id, dataset=dataset, task=task, source="imported" if imported else "induced",
                    typology_label=imported[0] if imported else f"induced by {client.provenance.label}",
                    hard_set=hard_set, config=config.as_dict(), provenance=provenance, queries=list(queries))
    tracker = progress or ProgressWriter(None)
    try:
        if imported:
            categories, stop_reason = list(imported[1]), None
        else:
            def saved(rnd: Round) -> None:
                store.save_round(run_id, rnd)
                if on_round:
                    on_round(rnd)

            def round_stage(number: int) -> None:
                tracker.stage(f"induction round {number} of at most {config.max_rounds}")

            tracker.stage(f"reasons for the {task.upper()} hard queries", len(queries), "query")
            reasons, failures = collect_reasons(client, task, queries, config, on_progress=tracker.advance)
            store.save_reasons(run_id, reasons, failures)
            induction = induce_from_reasons(client, task, reasons, failures, config, on_round=saved,
                                            before_round=round_stage)
            categories, stop_reason = induction.categories, induction.stop_reason
            tracker.set_stages(tracker.record["stage_index"] + 1)  # converged early: the assignment is last
        store.save_typology(run_id, categories, stop_reason)
        tracker.stage(f"assignment of reasons to the {task.upper()} hard queries", len(queries), "query")
        store.save_assignments(run_id, assign(client, task, queries, categories, config,
                                              on_progress=tracker.advance))
    except BaseException as exc:
        store.fail_run(run_id, " ".join(str(exc).split()) or type(exc).__name__)
        raise
    return store.result(run_id)
