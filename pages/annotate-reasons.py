"""Annotate reasons: people check the LLM-assigned failure reasons of a sample of hard queries.

Keyboard: Y / N mark the highlighted reason correct / incorrect (and move to the next unmarked one),
Up / Down move the highlight, Left / Right go to the previous / next query. Every answer is saved
the moment it is given; one given by key while the server is unreachable is kept in the browser, shown
pending, and saved when it is back (pages/answer_outbox.js). The annotator's name and the current
query live in the URL, so a reload comes back to the same place.
"""
import streamlit as st

from pipeline.views import annotate_reasons as view
from pipeline.views import failure_typology
from pages import answer_outbox, use_app_navigation

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
typology = failure_typology.open_typology_store()  # None before the first typology run
samples = [s["sample"] for s in store.samples()]
annotate_tab, validation_tab = st.tabs(["Annotate", "Validation"])

with annotate_tab:
    top = st.columns([3, 1])
    top[0].caption(f"Annotating as **{failure_typology.literal_markdown(annotator)}**. Keys: Y / N mark the highlighted reason, ↑ / ↓ move the highlight, "
                   "← / → previous / next query.")

    def switch_annotator() -> None:
        st.session_state.pop("annotator", None)
        st.query_params.clear()

    if top[1].button("Switch annotator"):
        switch_annotator()
        st.rerun()

    if not samples:
        st.info("No annotation sample yet: create one from finished typology runs.")
        done = [r for r in (typology.list_runs(status="done") if typology else [])]
        if not done:
            st.warning("No finished typology run: run one on the Failure typology page or with "
                       "`python -m pipeline typology`.")
            st.stop()
        with st.form("new_sample"):
            latest = set(failure_typology.latest_done_runs(typology))
            chosen = st.multiselect("Typology runs", [r["run_id"] for r in done],
                                    default=[r["run_id"] for r in done if r["run_id"] in latest],
                                    format_func=lambda rid: failure_typology.run_label(typology.get_run(rid)))
            cols = st.columns(3)
            size = cols[0].number_input("Queries per annotator", min_value=1, value=50)
            seed = cols[1].number_input("Seed", min_value=0, value=0)
            own = cols[2].checkbox("Different queries per annotator",
                                   help="off (default): every annotator sees the same queries, so agreement can be computed")
            if st.form_submit_button("Create sample"):
                try:
                    store.create_sample(failure_typology.sample_items(typology, chosen), size=int(size), seed=int(seed),
                                        per_annotator=own)
                except (view.AnnotationError, ValueError) as exc:
                    st.error(failure_typology.literal_markdown(str(exc)))
                else:
                    st.rerun()
        st.stop()

    sample = st.selectbox("Sample", samples) if len(samples) > 1 else samples[0]
    queue = store.queue(annotator, sample)
    state = st.session_state
    # Answers are taken from the widgets' return values in this script run, never only from on_click /
    # on_change callbacks: after a server restart the browser's first event reaches a new session that
    # has not run the script yet, so Streamlit knows no callback for it and skips it (the value still
    # arrives) -- that lost the first click after every reconnect and the first arrow key.
    view.retry_pending(state, annotator)
    done = store.completed(annotator)
    n_done = sum(it.decision_key in done for it in queue)
    st.progress(n_done / len(queue) if queue else 0.0, text=f"{n_done} of {len(queue)} queries complete")

    pos = view.open_position(state, annotator, sample, queue, done,
                             {k: st.query_params.get(k) for k in ("dataset", "task", "qid")})
    item = queue[pos]
    saved = store.saved(annotator, item)
    answers = {c: v["value"] for c, v in saved.items()}
    assigned = item.assigned_names
    focus = view.open_focus(state, assigned, answers)
    st.query_params.update({"dataset": item.dataset, "task": item.task, "qid": item.qid})
    for message in view.save_problems(state):
        st.error(failure_typology.literal_markdown(message))

    def go(step: int) -> None:
        view.go(state, pos, step, len(queue))
        st.rerun()

    def mark(index: int, value: bool) -> None:
        view.mark(state, annotator, item, index, value)
        st.rerun()

    nav = st.columns([1, 1, 4])
    if nav[0].button("← Previous query", shortcut="Left", disabled=pos == 0):
        go(-1)
    if nav[1].button("Next query →", shortcut="Right", disabled=pos >= len(queue) - 1):
        go(1)
    nav[2].text(view.item_title(item, pos, len(queue)) + (" · complete" if item.decision_key in done else ""))

    st.subheader("Query")
    st.text(item.query)
    with st.expander("Task context (what the model saw)", expanded=True):
        st.code(item.context, language=None, wrap_lines=True)
    st.text(f"Reasons assigned by {item.model or '(model not recorded)'} · typology run {item.run_id or '(unknown)'}")
    small_note = failure_typology.small_model_note(failure_typology.run_provenances(typology, [item.run_id]))
    if small_note:
        st.warning(small_note)
    caption, warning = failure_typology.generator_note(item.task, item.generator,
                                                       failure_typology.is_default_generator(item.generator))
    if caption:
        st.text(caption)
    if warning:
        st.warning(warning)

    st.subheader("LLM-assigned reasons")
    st.caption(view.OUTAGE_NOTE)
    # The answer keys: kept in the browser until stored, so one given while the server is down is shown
    # pending and saved when it is back (pages/answer_outbox.js).
    sent = answer_outbox(view.outbox_data(state, annotator, sample, item, answers, focus), key="answer-outbox")
    if view.receive_outbox(state, sent, annotator, item):
        st.rerun()
    if item.status == failure_typology.UNKNOWN_CATEGORY:
        st.warning("The model's answer names categories outside the typology: this query is left out of every "
                   "validation figure (counted apart). You can still mark and tag its reasons below.")
        st.text(failure_typology.unknown_category_text(item.unknown))  # model output: plain text
        st.code(item.raw or "(empty answer)", language=None, wrap_lines=True)
    elif item.unreadable or item.status == "unknown":
        if item.unreadable:
            st.error(f"The model's answer was unreadable ({item.status}): no reason could be read from it, so "
                     "this query is left out of every validation figure (counted as excluded). Its answer as given:")
            st.code(item.raw or "(empty answer)", language=None, wrap_lines=True)
        else:
            st.warning("This sample was drawn before unreadable answers were recorded: the model assigned no reason "
                       "or its answer was unreadable. The query is left out of the validation figures.")
        st.caption("You can still tag the reasons that apply below (they are stored and exported, marked as judging "
                   "an unreadable answer, and stay out of the figures), or confirm that none does.")
    elif not assigned:
        st.info("The model assigned no reason to this query. Tag the ones that apply below, or confirm that "
                "none does.")
    if not assigned:
        confirmed = item.decision_key in done and not any(answers.values())
        if st.button("✓ No reason applies (saved)" if confirmed else "No reason applies", key="none-applies",
                     type="primary" if confirmed else "secondary",
                     help="saved: nothing applies" if confirmed else "confirm that no reason applies"):
            view.confirm_or_queue(state, annotator, item)
            st.rerun()
    for i, a in enumerate(item.assigned):
        value = answers.get(a["category"])
        mark_text = {1: "Marked correct", 0: "Marked incorrect", None: "Not marked yet"}[value]
        with st.container(border=True, key=f"reason-{i}"):
            cols = st.columns([5, 1, 1])
            cols[0].text(("▶ " if i == focus else "") + f"{a['category']} — {mark_text}"
                         + (f" · ✓ saved {failure_typology.when(saved[a['category']]['updated'])}" if value is not None else ""))
            cols[0].text(a["justification"] or "(no justification given)")  # model output: plain text
            if cols[1].button("Correct", key=f"yes-{i}", type="primary" if value == 1 else "secondary"):
                mark(i, True)
            if cols[2].button("Incorrect", key=f"no-{i}", type="primary" if value == 0 else "secondary"):
                mark(i, False)
    if len(assigned) > 1:
        cols = st.columns([1, 1, 4])
        if cols[0].button("↑ Previous reason", shortcut="Up"):
            view.move_focus(state, focus, -1, len(assigned))
            st.rerun()
        if cols[1].button("↓ Next reason", shortcut="Down"):
            view.move_focus(state, focus, 1, len(assigned))
            st.rerun()

    others = [c["name"] for c in item.categories if c["name"] not in assigned]
    key = "-".join(item.decision_key)
    if others:
        stored_tags = [c for c in others if answers.get(c)]
        chosen = view.reconciled_widget(state, f"tags-{key}", stored_tags, lambda default: st.pills(
            "Other reasons that apply (missed by the model)", others, selection_mode="multi", default=default,
            key=f"tags-{key}", format_func=failure_typology.literal_markdown))
        tags_saved = view.save_tags(state, annotator, item, others, chosen, stored_tags)  # the annotator's click
        if tags_saved:
            st.rerun()
        if tags_saved is False:
            for message in view.save_problems(state):
                st.error(failure_typology.literal_markdown(message))
        st.text("Saved tags: " + (", ".join(f"{c} ✓ {failure_typology.when(saved[c]['updated'])}" for c in stored_tags)
                                  if stored_tags else "none"))
    descriptions = {c["name"]: c["description"] for c in item.categories}
    with st.expander("Category descriptions"):
        for name, text in descriptions.items():
            st.text(f"{name}: {text}")

    stored_note = store.note(annotator, item)
    for field, label, widget in (("note", "Note", st.text_area),
                                 ("proposed", "Propose a reason not in the typology", st.text_input)):
        value = view.reconciled_widget(state, f"{field}-{key}", stored_note[field], lambda default: widget(
            label, value=default, key=f"{field}-{key}"))
        if value is not None and value != stored_note[field]:
            if view.save_note_or_queue(state, annotator, item, **{field: value}):
                st.rerun()
            for message in view.save_problems(state):
                st.error(failure_typology.literal_markdown(message))
    if stored_note["updated"]:
        st.text(f"Note saved ✓ {failure_typology.when(stored_note['updated'])}")

with validation_tab:
    rows = store.export_rows()
    st.caption("Each (query, category) is a binary decision: the LLM assigned it or not; an annotator says it applies "
               "(an assigned reason marked correct, or a category they added) or not. A complete query counts every "
               "cell; a query with an assigned reason still unmarked counts only the cells answered so far, never "
               "its untouched categories. The figures are computed from exactly the rows of the CSV export, per "
               "model that assigned the reasons; what each figure means is in the table of definitions below.")
    st.text(view.answered_text(store.answered_queries()))
    try:
        figures = view.validation_report(rows)
    except ValueError as exc:
        st.error(failure_typology.literal_markdown(str(exc)))
        figures = None
    if figures and figures["n_rows"]:
        st.dataframe(view.annotators_frame(store, sample), hide_index=True)
        st.text(view.excluded_text(figures))
        fmt = {c: st.column_config.NumberColumn(format="%.3f") for c in (*view.FIGURE_COLUMNS, "kappa", "agreement")}
        for model, by_model in figures["by_model"].items():
            st.subheader("LLM against the annotators")
            st.text(f"Reasons assigned by {model or '(model not recorded)'} · typology runs: "
                    f"{', '.join(r or '(unknown)' for r in by_model['runs'])}")
            small_note = failure_typology.small_model_note(failure_typology.run_provenances(typology, by_model["runs"]))
            if small_note:
                st.warning(small_note)
            st.dataframe(view.overall_frame(by_model), hide_index=True, column_config=fmt)
            st.dataframe(view.per_category_frame(by_model), hide_index=True, column_config=fmt)
        if not figures["by_model"]:
            st.info("No readable assignment among the answered queries: no figure of the LLM can be computed.")
        st.subheader("Agreement between annotators (Cohen's κ)")
        kappa = view.kappa_frame(figures)
        if kappa.empty:
            st.info("κ needs two annotators who answered the same queries.")
        else:
            st.dataframe(kappa, hide_index=True, column_config=fmt)
        with st.expander("What each figure means", expanded=True):
            st.dataframe(view.definitions_frame(), hide_index=True)
        proposals = view.proposals_frame(store)
        if not proposals.empty:
            st.subheader("Notes and proposed reasons")
            st.dataframe(proposals, hide_index=True)
    else:
        st.info("No answer saved yet.")
    # The CSV is made when the button is clicked, from the store as it is then (drawn with the page, it
    # missed what another tab, annotator or the CLI stored since).
    st.download_button("Export CSV", view.export_csv_now, file_name="annotations.csv", mime="text/csv",
                       on_click="ignore")
    upload = st.file_uploader("Import a CSV (" + ",".join(view.CSV_COLUMNS) + "; an older export without run_id, model "
                              "and llm_answer is attributed to the matching typology run)", type=["csv"])
    if upload is not None and st.session_state.get("imported") != upload.file_id:
        try:
            n = store.import_csv(upload.name, upload.getvalue().decode("utf-8-sig"))
        except (view.AnnotationError, UnicodeDecodeError) as exc:
            st.error(failure_typology.literal_markdown(str(exc)))
        else:
            st.session_state["imported"] = upload.file_id
            st.success(f"Imported {n} rows from {upload.name}.")
            st.rerun()
