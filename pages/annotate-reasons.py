"""Annotate reasons: people check the LLM-assigned failure reasons of a sample of hard queries.

Keyboard: Y / N mark the highlighted reason correct / incorrect (and move to the next unmarked one),
Up / Down move the highlight, Left / Right go to the previous / next query. Every answer is saved
the moment it is given; the annotator's name and the current query live in the URL, so a reload
comes back to the same place.
"""
import streamlit as st

from pipeline import typology_view as view
from pipeline.annotations import AnnotationError
from pipeline.validation import report as validation_report
from pages import use_app_navigation

use_app_navigation()

st.title("Annotate reasons")

# ---------------------------------------------------------------------------------- annotator
if "annotator" not in st.session_state and st.query_params.get("annotator"):
    st.session_state["annotator"] = st.query_params["annotator"]
annotator = st.session_state.get("annotator")
if not annotator:
    with st.form("who"):
        name = st.text_input("Your name (asked once per browser session)", max_chars=80)
        if st.form_submit_button("Start annotating"):
            name = " ".join(name.split())
            if not name or "," in name:
                st.error("Enter a name (no commas).")
            else:
                st.session_state["annotator"] = name
                st.query_params["annotator"] = name
                st.rerun()
    st.stop()
st.query_params["annotator"] = annotator

store = view.open_annotation_store()
samples = [s["sample"] for s in store.samples()]
annotate_tab, validation_tab = st.tabs(["Annotate", "Validation"])

with annotate_tab:
    top = st.columns([3, 1])
    top[0].caption(f"Annotating as **{annotator}**. Keys: Y / N mark the highlighted reason, ↑ / ↓ move the highlight, "
                   "← / → previous / next query.")

    def switch_annotator() -> None:
        st.session_state.pop("annotator", None)
        st.query_params.clear()

    top[1].button("Switch annotator", on_click=switch_annotator)

    if not samples:
        st.info("No annotation sample yet: create one from finished typology runs.")
        typology = view.open_typology_store()
        done = [r for r in (typology.list_runs(status="done") if typology else [])]
        if not done:
            st.warning("No finished typology run: run one on the Failure typology page or with "
                       "`python -m pipeline typology`.")
            st.stop()
        with st.form("new_sample"):
            latest = set(view.latest_done_runs(typology))
            chosen = st.multiselect("Typology runs", [r["run_id"] for r in done],
                                    default=[r["run_id"] for r in done if r["run_id"] in latest],
                                    format_func=lambda rid: view.run_label(typology.get_run(rid)))
            cols = st.columns(3)
            size = cols[0].number_input("Queries per annotator", min_value=1, value=50)
            seed = cols[1].number_input("Seed", min_value=0, value=0)
            own = cols[2].checkbox("Different queries per annotator",
                                   help="off (default): every annotator sees the same queries, so agreement can be computed")
            if st.form_submit_button("Create sample"):
                try:
                    store.create_sample(view.sample_items(typology, chosen), size=int(size), seed=int(seed),
                                        per_annotator=own)
                except (AnnotationError, ValueError) as exc:
                    st.error(str(exc))
                else:
                    st.rerun()
        st.stop()

    sample = st.selectbox("Sample", samples) if len(samples) > 1 else samples[0]
    queue = store.queue(annotator, sample)
    done = store.completed(annotator)
    n_done = sum(it.key in done for it in queue)
    st.progress(n_done / len(queue) if queue else 0.0, text=f"{n_done} of {len(queue)} queries complete")

    state = st.session_state
    if state.get("queue_of") != (annotator, sample):  # a new session, annotator or sample
        wanted = view.position_of(queue, st.query_params.get("dataset"), st.query_params.get("task"),
                                  st.query_params.get("qid"))
        state["pos"] = wanted if wanted is not None else view.first_open(queue, done)
        state["focus"] = None
        state["queue_of"] = (annotator, sample)
    pos = min(state["pos"], len(queue) - 1)
    item = queue[pos]
    answers = store.answers(annotator, item.key)
    assigned = item.assigned_names
    if state["focus"] is None or state["focus"] >= max(len(assigned), 1):
        state["focus"] = next((i for i, c in enumerate(assigned) if answers.get(c) is None), 0)
    focus = state["focus"]
    st.query_params.update({"dataset": item.dataset, "task": item.task, "qid": item.qid})

    def go(step: int) -> None:
        state["pos"] = max(0, min(len(queue) - 1, state["pos"] + step))
        state["focus"] = None

    def move_focus(step: int) -> None:
        state["focus"] = max(0, min(len(assigned) - 1, state["focus"] + step))

    def mark(index: int, value: bool) -> None:
        view.save_answer(annotator, item, assigned[index], value)
        after = view.current_answers(annotator, item.key)
        later = [i for i in range(index + 1, len(assigned)) if after.get(assigned[i]) is None]
        state["focus"] = later[0] if later else index

    nav = st.columns([1, 1, 4])
    nav[0].button("← Previous query", on_click=go, args=(-1,), shortcut="Left", disabled=pos == 0)
    nav[1].button("Next query →", on_click=go, args=(1,), shortcut="Right", disabled=pos >= len(queue) - 1)
    nav[2].caption(view.item_title(item, pos, len(queue)) + (" · complete" if item.key in done else ""))

    st.subheader("Query")
    st.text(item.query)
    with st.expander("Task context (what the model saw)", expanded=True):
        st.code(item.context, language=None, wrap_lines=True)
    st.caption(f"Reasons assigned by {item.model}" + (f" · {view.SMALL_MODEL_NOTE}" if "135M" in item.model else ""))

    st.subheader("LLM-assigned reasons")
    if not assigned:
        st.info("The model assigned no reason to this query. Tag the ones that apply below.")
    for i, a in enumerate(item.assigned):
        value = answers.get(a["category"])
        mark_text = {1: "Marked correct", 0: "Marked incorrect", None: "Not marked yet"}[value]
        with st.container(border=True, key=f"reason-{i}"):
            cols = st.columns([5, 1, 1])
            cols[0].text(("▶ " if i == focus else "") + f"{a['category']} — {mark_text}")
            cols[0].caption(a["justification"] or "(no justification given)")
            cols[1].button("Correct", key=f"yes-{i}", on_click=mark, args=(i, True),
                           shortcut="Y" if i == focus else None, type="primary" if value == 1 else "secondary")
            cols[2].button("Incorrect", key=f"no-{i}", on_click=mark, args=(i, False),
                           shortcut="N" if i == focus else None, type="primary" if value == 0 else "secondary")
    if len(assigned) > 1:
        cols = st.columns([1, 1, 4])
        cols[0].button("↑ Previous reason", on_click=move_focus, args=(-1,), shortcut="Up")
        cols[1].button("↓ Next reason", on_click=move_focus, args=(1,), shortcut="Down")

    others = [c["name"] for c in item.categories if c["name"] not in assigned]
    key = "-".join(item.key)

    def save_tags() -> None:
        chosen = set(state[f"tags-{key}"] or [])
        current = view.current_answers(annotator, item.key)
        for name in others:
            if (name in chosen) != bool(current.get(name)):
                view.save_answer(annotator, item, name, name in chosen)

    if others:
        st.pills("Other reasons that apply (missed by the model)", others, selection_mode="multi",
                 default=[c for c in others if answers.get(c)], key=f"tags-{key}", on_change=save_tags)
    descriptions = {c["name"]: c["description"] for c in item.categories}
    with st.expander("Category descriptions"):
        for name, text in descriptions.items():
            st.text(f"{name}: {text}")

    saved = store.note(annotator, item.key)

    def save_text(field: str) -> None:
        view.save_note(annotator, item, **{field: state[f"{field}-{key}"]})

    st.text_area("Note", value=saved["note"], key=f"note-{key}", on_change=save_text, args=("note",))
    st.text_input("Propose a reason not in the typology", value=saved["proposed"], key=f"proposed-{key}",
                  on_change=save_text, args=("proposed",))

with validation_tab:
    rows = store.export_rows()
    st.caption("Each (query, category) is a binary decision: the LLM assigned it or not; an annotator says it applies "
               "(an assigned reason marked correct, or a category they added) or not. Only completed queries count. "
               "The figures are computed from exactly the rows of the CSV export.")
    try:
        figures = validation_report(rows)
    except ValueError as exc:
        st.error(str(exc))
        figures = None
    if figures and figures["n_rows"]:
        st.dataframe(view.annotators_frame(store, sample), hide_index=True)
        st.subheader("LLM against the annotators")
        fmt = {c: st.column_config.NumberColumn(format="%.3f") for c in ("accuracy", "precision", "recall", "kappa",
                                                                         "agreement")}
        st.dataframe(view.overall_frame(figures), hide_index=True, column_config=fmt)
        st.dataframe(view.per_category_frame(figures), hide_index=True, column_config=fmt)
        st.subheader("Agreement between annotators (Cohen's κ)")
        kappa = view.kappa_frame(figures)
        if kappa.empty:
            st.info("κ needs two annotators who answered the same queries.")
        else:
            st.dataframe(kappa, hide_index=True, column_config=fmt)
        proposals = store.proposals()
        if proposals:
            st.subheader("Notes and proposed reasons")
            st.dataframe(proposals, hide_index=True)
    else:
        st.info("No completed annotation yet.")
    st.download_button("Export CSV", store.export_csv(), file_name="annotations.csv", mime="text/csv")
    upload = st.file_uploader("Import a CSV (annotator,dataset,task,qid,category,llm_assigned,human_applicable)",
                              type=["csv"])
    if upload is not None and st.session_state.get("imported") != upload.file_id:
        try:
            n = store.import_csv(upload.name, upload.getvalue().decode("utf-8-sig"))
        except (AnnotationError, UnicodeDecodeError) as exc:
            st.error(str(exc))
        else:
            st.session_state["imported"] = upload.file_id
            st.success(f"Imported {n} rows from {upload.name}.")
            st.rerun()
