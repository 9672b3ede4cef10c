"""The "Annotate reasons" page without its widgets: where an annotator is (the queue position and the
highlighted reason), what a click changes, the saves that must never be lost, and the validation tab's
tables. Plain functions over the page's session state (any mutable mapping: ``st.session_state`` on
the page, a dict in tests); no streamlit here.

The page's state: ``pos`` (the item of the queue shown), ``focus`` (the highlighted assigned reason;
``None``: the first unmarked one), ``queue_of`` (the (annotator, sample) the position belongs to), the
queued saves (:data:`PENDING`) and their messages (:data:`PROBLEMS`), and each answer widget's
last shown value (:func:`reconciled_widget`). Everything written goes through the annotation store
(:mod:`pipeline.annotation.store`).
"""
from __future__ import annotations

import math
import sqlite3
import time
from typing import Mapping, Sequence

import pandas as pd

from pipeline.annotation.items import AnnotationError, Item
from pipeline.annotation.store import DEFAULT_SAMPLE, AnnotationStore
from pipeline.annotation.store import default_path as annotations_path
from pipeline.typology.categories import TASK_TITLES
from pipeline.views.failure_typology import when
from pipeline.annotation.validation import DEFINITIONS, EXCLUDED_WORDS, OVERALL
from pipeline.annotation.validation import report as validation_report  # noqa: F401  (the page's import)
from pipeline.annotation.csv_format import CSV_COLUMNS  # noqa: F401  (the page's import)


def open_annotation_store() -> AnnotationStore:
    return AnnotationStore(annotations_path())


def export_csv_now() -> str:
    """The CSV export of the store as it is now (the Export button calls it on each click, on a
    thread of its own: the store is opened here, not shared with the page's run)."""
    with open_annotation_store() as store:
        return store.export_csv()


def answered_text(answered: dict) -> str:
    """What the figures and the export are made of (:meth:`AnnotationStore.answered_queries`), in words."""
    return (f"{answered['rows']} answered cells: {answered['complete']} complete queries, {answered['partial']} "
            "partial queries counted by their answered cells.")


def first_open(queue: Sequence[Item], done: set) -> int:
    """Where an annotator resumes: the first item not completed (0 when all are); ``done`` holds
    decision keys (:meth:`AnnotationStore.completed`)."""
    return next((i for i, it in enumerate(queue) if it.decision_key not in done), 0)


def position_of(queue: Sequence[Item], dataset: str | None, task: str | None, qid: str | None) -> int | None:
    return next((i for i, it in enumerate(queue) if it.key == (dataset, task, qid)), None)


# ---------------------------------------------------------------------------------- position and focus
def open_position(state, annotator: str, sample: str, queue: Sequence[Item], done: set,
                  url: Mapping[str, str | None]) -> int:
    """The queue position to show. A new session, annotator or sample starts at the item the URL names
    (``dataset``, ``task``, ``qid``: a reload comes back to the same place), else at the first item not
    completed, with no reason highlighted yet; otherwise the position stays (clamped to the queue)."""
    if state.get("queue_of") != (annotator, sample):
        wanted = position_of(queue, url.get("dataset"), url.get("task"), url.get("qid"))
        state["pos"] = wanted if wanted is not None else first_open(queue, done)
        state["focus"] = None
        state["queue_of"] = (annotator, sample)
    return min(state["pos"], len(queue) - 1)


def open_focus(state, assigned: Sequence[str], answers: Mapping[str, int | None]) -> int:
    """The highlighted assigned reason: kept while it exists, else the first one not yet marked (0
    when all are, or when the model assigned none)."""
    if state["focus"] is None or state["focus"] >= max(len(assigned), 1):
        state["focus"] = next((i for i, c in enumerate(assigned) if answers.get(c) is None), 0)
    return state["focus"]


def go(state, pos: int, step: int, total: int) -> None:
    """Move ``step`` items from ``pos`` (within the queue of ``total``); the new item's first unmarked
    reason gets the highlight."""
    state["pos"] = max(0, min(total - 1, pos + step))
    state["focus"] = None


def move_focus(state, focus: int, step: int, n_assigned: int) -> None:
    """Move the highlight ``step`` reasons (within the ``n_assigned`` assigned ones)."""
    state["focus"] = max(0, min(n_assigned - 1, focus + step))


def mark(state, annotator: str, item: Item, index: int, value: bool) -> bool:
    """Store the annotator's answer to the ``index``-th assigned reason (or queue it, see
    :func:`save_or_queue`); once stored, the highlight moves to the next reason not yet marked (it stays
    when there is none). Returns whether it was stored."""
    if not save_or_queue(state, annotator, item, item.assigned_names[index], value):
        return False
    _focus_after(state, annotator, item, index)
    return True


def _focus_after(state, annotator: str, item: Item, index: int) -> None:
    """The highlight after the ``index``-th assigned reason was marked: the next one not yet marked,
    else it stays."""
    assigned = item.assigned_names
    after = current_answers(annotator, item)
    later = [i for i in range(index + 1, len(assigned)) if after.get(assigned[i]) is None]
    state["focus"] = later[0] if later else index


def save_tags(state, annotator: str, item: Item, others: Sequence[str], chosen: Sequence[str] | None,
              stored: Sequence[str]) -> bool | None:
    """Store the difference between the categories the annotator tagged (``chosen``, among the ones
    the model did not assign: ``others``) and the stored ones: ``None`` when there is none, else
    whether every changed tag was stored (the rest is queued or reported, :func:`save_problems`)."""
    chosen = list(chosen or [])
    if sorted(chosen) == sorted(stored):
        return None
    results = [save_or_queue(state, annotator, item, name, name in chosen) for name in others
               if (name in chosen) != (name in stored)]
    return all(results)


# ---------------------------------------------------------------------------------- saves
# A save that fails is never silent: one the store refuses (AnnotationError: it would be wrong) is
# reported; one that fails for a passing reason (the database locked or unreachable) is kept in the
# session and retried on the next script run, with a visible count, until it is stored.
PENDING, PROBLEMS = "annotation_pending", "annotation_problems"


def _attempt(state, action: tuple) -> bool:
    method, annotator, item, args, kwargs = action
    try:
        with open_annotation_store() as store:
            getattr(store, method)(annotator, item, *args, **kwargs)
    except AnnotationError as exc:
        state.setdefault(PROBLEMS, []).append(f"Not saved: {exc}")
        return False
    except (sqlite3.Error, OSError) as exc:
        state.setdefault(PENDING, []).append(action)
        state.setdefault(PROBLEMS, []).append(f"Not saved yet ({exc}): it is retried with your next action.")
        return False
    return True


def save_or_queue(state, annotator: str, item: Item, category: str, applicable: bool | None) -> bool:
    """Store one answer (True), or report / queue it for a retry (False); see above."""
    return _attempt(state, ("set_answer", annotator, item, (category, applicable), {}))


def confirm_or_queue(state, annotator: str, item: Item) -> bool:
    return _attempt(state, ("confirm", annotator, item, (), {}))


def save_note_or_queue(state, annotator: str, item: Item, **fields) -> bool:
    return _attempt(state, ("set_note", annotator, item, (), fields))


def retry_pending(state, annotator: str) -> int:
    """Retry the queued saves of ``annotator`` (in order); returns how many are still pending."""
    pending, state[PENDING] = [a for a in state.get(PENDING, []) if a[1] == annotator], []
    for action in pending:
        _attempt(state, action)
    return len(state[PENDING])


def save_problems(state) -> list[str]:
    """The messages of failed saves since the last run (then cleared), and a line per pending save."""
    messages, state[PROBLEMS] = state.get(PROBLEMS, []), []
    if state.get(PENDING):
        messages.append(f"{len(state[PENDING])} answer(s) not saved yet: retried with your next action.")
    return messages


# ---------------------------------------------------------------------------------- answers kept by the browser
# The answer keys (Y / N) go through pages/answer_outbox.js: each answer has an id and the time it was
# given, is kept in the browser until the server says it is stored (the acks below), and is sent again
# after an outage. The store applies an id once and never over a later answer.
OUTBOX_ACKS = "annotation_outbox_acks"
# What an outage looks like, in the tool's words (issue 36): when the server stops answering, Streamlit's
# own "Connection error" dialog covers the page with advice for a generic script. Streamlit 1.67 offers no
# setting that rewords or removes it (its text is fixed in the frontend bundle; the host-config switch
# blockErrorDialogs is hard-coded false by the server), so the page says beforehand what it means here.
OUTAGE_NOTE = ("If the dashboard's server stops answering, Streamlit shows its own \"Connection error\" box over "
               "this page. Its advice is generic (\"Are you connected to the internet?\", or `streamlit run "
               "yourscript.py` when the page was opened as localhost): here the server runs on the machine that "
               "serves this page and is started again with `make run`. Keep answering by key meanwhile: each "
               "answer is kept in this browser, marked pending, and saved once the server is back. Close the box "
               "(× or Esc) to see them.")
_ENTRY_TEXT = ("id", "annotator", "sample", "run_id", "dataset", "task", "qid")


def outbox_data(state, annotator: str, sample: str, item: Item, answers: Mapping[str, int | None],
                focus: int) -> dict:
    """What the outbox component is drawn with: the item the keys answer, its highlighted reason, the
    server's clock (answers are dated on it) and the outcome of each answer the browser sent."""
    return {"annotator": annotator, "sample": sample, "run_id": item.run_id, "dataset": item.dataset,
            "task": item.task, "qid": item.qid, "title": f"{item.dataset.upper()} · {TASK_TITLES[item.task]} · qid {item.qid}",
            "assigned": item.assigned_names, "answers": {c: answers.get(c) for c in item.assigned_names},
            "focus": focus, "server_time": time.time(), "acks": dict(state.get(OUTBOX_ACKS, {}))}


def _entry_problem(entry) -> str | None:
    """Why an answer sent by the browser cannot be read (None: it can)."""
    if not all(isinstance(entry.get(k), str) and entry[k] for k in _ENTRY_TEXT if k != "run_id") \
            or not isinstance(entry.get("run_id"), str):
        return "a field is missing"
    if not (entry.get("category") is None or isinstance(entry["category"], str)) \
            or not isinstance(entry.get("value"), bool):
        return "its answer is not readable"
    given = entry.get("given")
    if isinstance(given, bool) or not isinstance(given, (int, float)) or not math.isfinite(given):
        return "its time is not readable"
    return None


def _what(entry: dict) -> str:
    answer = "no reason applies" if entry["category"] is None else \
        f"{entry['category']} → {'correct' if entry['value'] else 'incorrect'}"
    return f"{answer} on {entry['dataset'].upper()} {entry['task']} qid {entry['qid']} ({entry['annotator']})"


def _receive(state, entry: dict) -> str | None:
    """Store one answer sent by the browser; its outcome, None when it should be sent again."""
    try:
        with open_annotation_store() as store:
            item = store.sample_item(entry["sample"], entry["dataset"], entry["task"], entry["qid"])
            if item is None or item.run_id != entry["run_id"]:
                raise AnnotationError(f"the query is not in sample {entry['sample']!r} with typology run "
                                      f"{entry['run_id'] or '(unknown)'} any more")
            kwargs = {"answer_id": entry["id"], "given": entry["given"]}
            if entry["category"] is None:
                return store.confirm(entry["annotator"], item, **kwargs)
            return store.set_answer(entry["annotator"], item, entry["category"], entry["value"], **kwargs)
    except AnnotationError as exc:
        state.setdefault(PROBLEMS, []).append(f"Not saved: {_what(entry)}: {exc}")
        return "refused"
    except (sqlite3.Error, OSError) as exc:
        state.setdefault(PROBLEMS, []).append(f"Not saved yet ({exc}): {_what(entry)} is kept in this browser "
                                              "and sent again in a few seconds.")
        return None


def receive_outbox(state, outbox, annotator: str, item: Item) -> bool:
    """Store the answers the browser sent (``outbox``: the component's state, ``{"answers": [...]}``), in
    the order they were given, and note each one's outcome for the browser (it drops the ones with an
    outcome). A stored answer to the shown ``item`` moves the highlight as a click does. Returns whether
    the page must be drawn again (something was stored, or the outcomes changed)."""
    entries = outbox.get("answers") if isinstance(outbox, Mapping) else None
    entries = [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []
    acks, stored = {}, False
    readable = []
    for entry in entries:
        problem = _entry_problem(entry)
        if problem is None:
            readable.append(dict(entry))
        elif isinstance(entry.get("id"), str):
            state.setdefault(PROBLEMS, []).append(f"Not saved: an answer kept by this browser ({problem}).")
            acks[entry["id"]] = "refused"
    for entry in sorted(readable, key=lambda e: e["given"]):
        outcome = _receive(state, entry)
        if outcome is None:
            continue
        acks[entry["id"]] = outcome
        if outcome == "superseded":
            state.setdefault(PROBLEMS, []).append(
                f"Not applied: {_what(entry)}, given at {when(entry['given'])} while the server was unreachable, "
                "arrived after a later answer to the same reason; the later one is kept.")
        if outcome == "stored":
            stored = True
            if entry["annotator"] == annotator and (entry["run_id"], entry["dataset"], entry["task"], entry["qid"]) \
                    == item.decision_key and entry["category"] in item.assigned_names:
                _focus_after(state, annotator, item, item.assigned_names.index(entry["category"]))
    changed = set(acks) != set(state.get(OUTBOX_ACKS, {}))  # the browser needs an outcome, not the latest one
    state[OUTBOX_ACKS] = acks
    return stored or changed


def reconciled_widget(state, key: str, stored, draw):
    """Draw a keyed answer widget with ``draw(default)`` so that what it shows is the store's unless
    the annotator changed it, and return its value.

    The widget's value is the annotator's action when it differs from what it showed in the last run
    of this session (a click), or when it arrives in a session that never showed it (the browser kept
    it across a server restart). A value equal to what it showed last while the store now holds
    something else means the store changed elsewhere (an import, another tab): the widget is reset to
    the store rather than writing the stale value back."""
    def same(a, b) -> bool:  # a multi-select's value is a list: its order carries no meaning
        return sorted(a) == sorted(b) if isinstance(a, list) and isinstance(b, list) else a == b

    shown = f"shown-{key}"
    if key in state and shown in state and same(state[key], state[shown]) and not same(state[shown], stored):
        state[key] = stored
    value = draw(None if key in state else stored)
    state[shown] = value
    return value


def current_answers(annotator: str, item: Item) -> dict:
    with open_annotation_store() as store:
        return store.answers(annotator, item)


def item_title(item: Item, position: int, total: int) -> str:
    return f"Query {position + 1} of {total} · {item.dataset.upper()} · {TASK_TITLES[item.task]} · qid {item.qid}"


# ---------------------------------------------------------------------------------- validation tab
FIGURE_COLUMNS = ["cell_accuracy", "precision", "recall", "exact_agreement"]
COUNT_COLUMNS = ["decisions", "queries", "assigned", "TP", "FP", "FN (added)", "TN", "exact queries"]


def _fig_row(name: str, fig: dict) -> dict:
    return {"against": name, **{c: fig[c] for c in FIGURE_COLUMNS}, "decisions": fig["n_decisions"],
            "queries": fig["n_queries"], "assigned": fig["n_assigned"], "TP": fig["tp"], "FP": fig["fp"],
            "FN (added)": fig["fn"], "TN": fig["tn"], "exact queries": fig["n_exact_queries"]}


def _against(figures: dict):
    return [*figures["llm_vs_annotator"].items(), ("union of annotators", figures["llm_vs_union"])]


def overall_frame(figures: dict) -> pd.DataFrame:
    """One model's figures (``report(...)["by_model"][model]``) against each annotator and the union."""
    rows = [_fig_row(name, f[OVERALL]) for name, f in _against(figures)] if figures["llm_vs_annotator"] else []
    return pd.DataFrame(rows, columns=["against", *FIGURE_COLUMNS, *COUNT_COLUMNS])


def per_category_frame(figures: dict) -> pd.DataFrame:
    rows = [{"category": category, **_fig_row(name, fig)} for name, figs in _against(figures)
            for category, fig in figs["per_category"].items()] if figures["llm_vs_annotator"] else []
    return pd.DataFrame(rows, columns=["category", "against", *FIGURE_COLUMNS, *COUNT_COLUMNS])


def definitions_frame() -> pd.DataFrame:
    """What each figure of the Validation tab means (the report's own definitions)."""
    return pd.DataFrame([{"figure": k, "definition": v} for k, v in DEFINITIONS.items()],
                        columns=["figure", "definition"])


def excluded_text(report: dict) -> str:
    parts = [f"{v['queries']} queries ({v['decisions']} decisions) with {EXCLUDED_WORDS[kind]}"
             for kind, v in report["excluded"].items() if v["queries"]]
    return ("Excluded from every figure (never counted as true negatives): " + "; ".join(parts) + ".") if parts else \
        "No query was excluded (every judged assignment was readable)."


def kappa_frame(report: dict) -> pd.DataFrame:
    rows = []
    for pair, figs in report["kappa"].items():
        for category, fig in [(OVERALL, figs[OVERALL]), *figs["per_category"].items()]:
            rows.append({"annotators": pair, "category": category, "kappa": fig["kappa"],
                         "note": fig["undefined"] or "", "agreement": fig["agreement"],
                         "decisions": fig["n_decisions"], "queries": fig["n_queries"], "both yes": fig["both_yes"],
                         "both no": fig["both_no"], "only first": fig["only_first"],
                         "only second": fig["only_second"]})
    return pd.DataFrame(rows, columns=["annotators", "category", "kappa", "note", "agreement", "decisions", "queries",
                                       "both yes", "both no", "only first", "only second"])


def proposals_frame(store: AnnotationStore) -> pd.DataFrame:
    """Notes and proposed reasons, with readable times."""
    rows = [{"annotator": p["annotator"], "dataset": p["dataset"], "task": p["task"], "qid": p["qid"],
             "run": p["run_id"], "note": p["note"], "proposed reason": p["proposed"], "updated": when(p["updated"])}
            for p in store.proposals()]
    return pd.DataFrame(rows, columns=["annotator", "dataset", "task", "qid", "run", "note", "proposed reason",
                                       "updated"])


def annotators_frame(store: AnnotationStore, sample: str = DEFAULT_SAMPLE) -> pd.DataFrame:
    rows = []
    for name in store.annotators():
        queue = store.queue(name, sample)
        done = store.completed(name)
        rows.append({"annotator": name, "completed in sample": sum(it.decision_key in done for it in queue),
                     "sample size": len(queue), "completed overall": len(done)})
    return pd.DataFrame(rows, columns=["annotator", "completed in sample", "sample size", "completed overall"])
