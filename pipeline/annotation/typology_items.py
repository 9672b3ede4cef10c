"""The annotation items drawn from finished typology runs (what ``pipeline annotations --create-sample``
and the "Annotate reasons" page put in a sample), and which generator an H2G run's reasons explain.

Library code under both: the page's view (``pipeline.views.failure_typology``) and the CLI import it from here.
"""
from __future__ import annotations

from typing import Sequence

from pipeline.annotation.items import Item
from pipeline.typology.store import TypologyStore

DEFAULT_GENERATOR = "embedded"  # pipeline.study.typology_sources.HardSetConfig.generator


def is_default_generator(label: str) -> bool:
    """Whether a generator label names the embedded default (``embedded`` or ``embedded:MODEL``)."""
    return label == DEFAULT_GENERATOR or label.startswith(f"{DEFAULT_GENERATOR}:")


def generator_of(hard_set: dict) -> tuple[str, bool]:
    """``(the generator whose answers an H2G typology explains, whether it is the embedded default)``
    from a run's hard-set description (the resolved model when recorded, so ``auto`` that fell back to
    the embedded model is flagged too); ``("", False)`` when the run does not record one."""
    spec = hard_set.get("generator") or ""
    resolved = hard_set.get("generator_model") or {}
    label = resolved.get("label") or (hard_set.get("configuration") or {}).get("generator") or spec
    return label, (spec == DEFAULT_GENERATOR or resolved.get("backend") == DEFAULT_GENERATOR
                   or is_default_generator(label))


def latest_done_runs(store: TypologyStore) -> list[str]:
    """The newest finished run per (dataset, task)."""
    chosen = {}
    for run in store.list_runs(status="done"):  # newest first
        chosen.setdefault((run["dataset"], run["task"]), run["run_id"])
    return list(chosen.values())


def sample_items(store: TypologyStore, run_ids: Sequence[str] = ()) -> list[Item]:
    """Annotation items (snapshots) from typology runs (default: :func:`latest_done_runs`)."""
    run_ids = list(run_ids) or latest_done_runs(store)
    items, seen = [], set()
    for run_id in run_ids:
        run = store.get_run(run_id)
        if run is None:
            raise ValueError(f"no typology run {run_id!r}")
        if run["status"] != "done":
            raise ValueError(f"typology run {run_id} is {run['status']}, not done")
        cats = [c.as_dict() for c in run["categories"]]
        generator = generator_of(run["hard_set"])[0] if run["task"] == "h2g" else ""
        for q in store.queries(run_id):
            key = (run["dataset"], run["task"], q["qid"])
            if key in seen:
                raise ValueError(f"two runs cover {' '.join(key)}: pick one run per dataset and task")
            seen.add(key)
            items.append(Item(run["dataset"], run["task"], q["qid"], run_id, run["provenance"].get("label", ""),
                              q["query"], q["context"], cats, q["assigned"], status=q["status"] or "failed",
                              raw=q["raw"] or "", generator=generator, unknown=tuple(q["unknown_categories"])))
    return items
