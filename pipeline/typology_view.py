"""Data and charts for the "Failure typology" and "Annotate reasons" pages (pages only lay out widgets).

Reads the typology store and the annotation store; the only writes are the annotator's own
answers (:func:`save_answer`, :func:`save_note`), a CSV import and a new sample, each a call into
:mod:`pipeline.annotations`. Text from models and passages goes into DataFrames and ``st.text``
as plain strings (never HTML); plotly hover text is escaped here.
"""
from __future__ import annotations

import html
import sys
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go

from core import jobs
from pipeline.annotations import DEFAULT_SAMPLE, AnnotationStore, Item
from pipeline.annotations import default_path as annotations_path
from pipeline.typology.categories import TASK_TITLES
from pipeline.typology.store import TypologyStore
from pipeline.typology.store import default_path as typology_path
from pipeline.validation import OVERALL

JOB_KIND = "typology"
SMALL_MODEL_NOTE = ("Produced by a 135M-class model: its reasons exercise the pipeline and the annotation "
                    "workflow; they are not findings about why queries fail.")


# ---------------------------------------------------------------------------------- typology runs
def open_typology_store() -> TypologyStore | None:
    """The store, or None before the first typology run (a page never creates it)."""
    return TypologyStore() if typology_path().is_file() else None


def run_label(run: dict) -> str:
    model = run["provenance"].get("label", "")
    cap = " · capped to {n_used} of {n_hard} queries".format(**run["hard_set"]) if run["hard_set"].get("capped") else ""
    return f"{run['dataset'].upper()} · {run['task'].upper()} · {run['typology_label']} · {model}{cap} · {run['status']}"


def runs(store: TypologyStore, dataset: str | None = None, task: str | None = None) -> list[dict]:
    return store.list_runs(dataset=dataset, task=task)


def categories_frame(result: dict, examples: int = 2) -> pd.DataFrame:
    """Per category: its description, how many queries the model assigned it to, example queries."""
    rows = []
    for cat in result["categories"]:
        hits = [q for q in result["queries"] if any(a["category"] == cat["name"] for a in q["assigned"])]
        rows.append({"category": cat["name"], "description": cat["description"], "queries": len(hits),
                     "share": len(hits) / result["n_queries"] if result["n_queries"] else 0.0,
                     "examples": " | ".join(f"{q['qid']}: {q['query']}" for q in hits[:examples])})
    return pd.DataFrame(rows, columns=["category", "description", "queries", "share", "examples"])


def rounds_frame(result: dict) -> pd.DataFrame:
    """What each induction round changed."""
    rows = [{"round": r["round"], "status": r["status"], "categories": len(r["categories"]),
             "added": ", ".join(r["added"]), "removed": ", ".join(r["removed"]),
             "unchanged": r["unchanged"], "queries seen": len(r["batch"])} for r in result["rounds"]]
    return pd.DataFrame(rows, columns=["round", "status", "categories", "added", "removed", "unchanged",
                                       "queries seen"])


def queries_frame(result: dict) -> pd.DataFrame:
    rows = [{"qid": q["qid"], "query": q["query"], "reasons": " | ".join(a["category"] for a in q["assigned"]),
             "n reasons": len(q["assigned"]), "assignment": q["status"] or "", "free-text reason": q["reason"] or ""}
            for q in result["queries"]]
    return pd.DataFrame(rows, columns=["qid", "query", "reasons", "n reasons", "assignment", "free-text reason"])


def counts_figure(result: dict) -> go.Figure:
    frame = categories_frame(result).sort_values("queries")
    fig = go.Figure(go.Bar(x=frame["queries"], y=[html.escape(c) for c in frame["category"]], orientation="h",
                           hovertext=[html.escape(d) for d in frame["description"]], hoverinfo="x+text"))
    fig.update_layout(title=f"Queries per reason ({result['dataset'].upper()}, {TASK_TITLES[result['task']]}, "
                            f"{result['n_queries']} queries)", xaxis_title="queries", margin={"t": 50, "l": 10},
                      height=max(250, 40 * len(frame) + 100))
    return fig


def typology_command(dataset: str, task: str, *, llm: str = "auto", max_rounds: int = 6,
                     max_queries: int | None = None, typology: str | None = None) -> list[str]:
    command = [sys.executable, "-m", "pipeline", "typology", "--dataset", dataset, "--task", task, "--llm", llm,
               "--max-rounds", str(max_rounds)]
    if max_queries:
        command += ["--max-queries", str(max_queries)]
    if typology:
        command += ["--typology", typology]
    return command


def submit_typology(dataset: str, task: str, **options) -> int:
    """Queue a typology run as a background job (it survives a closed tab); returns the job id."""
    return jobs.submit(typology_command(dataset, task, **options), label=f"typology {task} on {dataset}",
                       meta={"kind": JOB_KIND, "dataset": dataset, "task": task})


def typology_jobs(limit: int = 10) -> list[jobs.Job]:
    return [j for j in jobs.list_jobs(limit=200) if j.meta.get("kind") == JOB_KIND][:limit]


# ---------------------------------------------------------------------------------- annotation
def open_annotation_store() -> AnnotationStore:
    return AnnotationStore(annotations_path())


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
        for q in store.queries(run_id):
            key = (run["dataset"], run["task"], q["qid"])
            if key in seen:
                raise ValueError(f"two runs cover {' '.join(key)}: pick one run per dataset and task")
            seen.add(key)
            items.append(Item(run["dataset"], run["task"], q["qid"], run_id, run["provenance"].get("label", ""),
                              q["query"], q["context"], cats, q["assigned"]))
    return items


def first_open(queue: Sequence[Item], done: set) -> int:
    """Where an annotator resumes: the first item not completed (0 when all are)."""
    return next((i for i, it in enumerate(queue) if it.key not in done), 0)


def position_of(queue: Sequence[Item], dataset: str | None, task: str | None, qid: str | None) -> int | None:
    return next((i for i, it in enumerate(queue) if it.key == (dataset, task, qid)), None)


def save_answer(annotator: str, item: Item, category: str, applicable: bool | None) -> None:
    with open_annotation_store() as store:
        store.set_answer(annotator, item, category, applicable)


def current_answers(annotator: str, key: tuple[str, str, str]) -> dict:
    with open_annotation_store() as store:
        return store.answers(annotator, key)


def save_note(annotator: str, item: Item, **fields) -> None:
    with open_annotation_store() as store:
        store.set_note(annotator, item, **fields)


def item_title(item: Item, position: int, total: int) -> str:
    return f"Query {position + 1} of {total} · {item.dataset.upper()} · {TASK_TITLES[item.task]} · qid {item.qid}"


# ---------------------------------------------------------------------------------- validation
def _fig_row(name: str, fig: dict) -> dict:
    return {"against": name, "accuracy": fig["accuracy"], "precision": fig["precision"], "recall": fig["recall"],
            "decisions": fig["n_decisions"], "queries": fig["n_queries"], "TP": fig["tp"], "FP": fig["fp"],
            "FN": fig["fn"], "TN": fig["tn"]}


def overall_frame(report: dict) -> pd.DataFrame:
    rows = [_fig_row(a, f[OVERALL]) for a, f in report["llm_vs_annotator"].items()]
    if report["annotators"]:
        rows.append(_fig_row("union of annotators", report["llm_vs_union"][OVERALL]))
    return pd.DataFrame(rows, columns=["against", "accuracy", "precision", "recall", "decisions", "queries",
                                       "TP", "FP", "FN", "TN"])


def per_category_frame(report: dict) -> pd.DataFrame:
    rows = []
    for name, figs in [*report["llm_vs_annotator"].items(), ("union of annotators", report["llm_vs_union"])]:
        for category, fig in figs["per_category"].items():
            rows.append({"category": category, **_fig_row(name, fig)})
    return pd.DataFrame(rows, columns=["category", "against", "accuracy", "precision", "recall", "decisions",
                                       "queries", "TP", "FP", "FN", "TN"])


def kappa_frame(report: dict) -> pd.DataFrame:
    rows = []
    for pair, figs in report["kappa"].items():
        for category, fig in [(OVERALL, figs[OVERALL]), *figs["per_category"].items()]:
            rows.append({"annotators": pair, "category": category, "kappa": fig["kappa"],
                         "note": fig["undefined"] or "", "agreement": fig["agreement"],
                         "decisions": fig["n_decisions"], "queries": fig["n_queries"]})
    return pd.DataFrame(rows, columns=["annotators", "category", "kappa", "note", "agreement", "decisions", "queries"])


def annotators_frame(store: AnnotationStore, sample: str = DEFAULT_SAMPLE) -> pd.DataFrame:
    rows = []
    for name in store.annotators():
        queue = store.queue(name, sample)
        done = store.completed(name)
        rows.append({"annotator": name, "completed in sample": sum(it.key in done for it in queue),
                     "sample size": len(queue), "completed overall": len(done)})
    return pd.DataFrame(rows, columns=["annotator", "completed in sample", "sample size", "completed overall"])

