"""Failure typology: the reasons an LLM gives for why hard queries fail, per task, and how they were induced."""
import streamlit as st

from pipeline.views import failure_typology as view
from pipeline.views import query as query_page
from pages import use_app_navigation
from pages.panels.jobs import jobs_panel

use_app_navigation()

st.title("Failure typology")
st.caption("Why do hard queries fail? For each task's hard queries an LLM gives a reason; refinement rounds merge, "
           "generalise and extend the reasons into categories until a round changes nothing (or a round cap); every "
           "query is then assigned its categories with a justification. A typology can also be imported (the "
           "study's ten categories). People check the assignments on the Annotate reasons page.")

store = view.open_typology_store()
all_runs = view.runs(store) if store else []
if not all_runs:
    st.info("No typology run yet. Start one below, or from the command line: "
            "`python -m pipeline typology --dataset dl19 --task h2r --max-queries 6` "
            "(add `--typology study` to use the study's categories).")
else:
    left, right = st.columns(2)
    datasets = sorted({r["dataset"] for r in all_runs})
    dataset = left.selectbox("Dataset", datasets, format_func=str.upper)
    tasks = [t for t in ("h2r", "h2g", "h2j") if any(r["dataset"] == dataset and r["task"] == t for r in all_runs)]
    task = right.selectbox("Task", tasks, format_func=lambda t: f"{t.upper()} · {view.TASK_TITLES[t]}")
    choices = view.runs(store, dataset, task)
    run = st.selectbox("Typology run", choices, format_func=view.run_label)
    result = store.result(run["run_id"])
    st.text(f"Reasons produced by {result['model'].get('label') or '(model not recorded)'} · run {run['run_id']}")
    small_note = view.small_model_note([result["model"]])
    if small_note:
        st.warning(small_note)
    caption, warning = view.generator_note(task, *view.generator_of(run["hard_set"]))
    if caption:
        st.text(caption)
    if warning:
        st.warning(warning)
    if result["status"] != "done":
        st.error(view.literal_markdown(f"This run is {result['status']}"
                                       + (f": {run['error']}" if run.get("error") else "") + "."))

    cols = st.columns(5)
    cols[0].metric("Hard queries", result["n_queries"])
    cols[1].metric("Categories", len(result["categories"]))
    cols[2].metric("Rounds", result["n_rounds"] if result["source"] == "induced" else "imported")
    cols[3].metric("Unreadable assignments", result["n_unparseable"] + result["n_failed"],
                   help="answers no category list could be read from (e.g. [7], [{}]) and failed calls: left out "
                        "of every validation figure, never read as 'no reason applies'")
    cols[4].metric("Outside the typology", result["n_unknown_category"],
                   help="assignment answers that name categories not in the typology (counted apart)")
    if result["unknown_categories"]:
        st.text("Categories outside the typology the model named: "
                + "; ".join(f"{c['name']} ({c['n_queries']})" for c in result["unknown_categories"]))
    if result["source"] == "induced":
        st.text(view.stop_text(result, run.get("error")))
    degenerate = view.degenerate_warning(result)
    if degenerate:
        st.warning(degenerate)

    st.subheader("Reasons")
    st.dataframe(view.categories_frame(result), hide_index=True,
                 column_config={"share": st.column_config.ProgressColumn("share", min_value=0.0, max_value=1.0,
                                                                         format="percent")})
    empty = view.empty_chart_reason(result)
    if empty:
        st.info(empty)
    else:
        st.plotly_chart(view.counts_figure(result), key="typology_counts")

    if result["rounds"]:
        st.subheader("Rounds of induction")
        st.dataframe(view.rounds_frame(result), hide_index=True)
        for rnd in result["rounds"]:
            with st.expander(f"Round {rnd['round']}: {rnd['status']}, {len(rnd['categories'])} categories"):
                for cat in rnd["categories"]:
                    st.text(f"• {cat['name']}: {cat['description']}")
                st.caption("The model's answer, as given:")
                st.code(rnd["raw"] or "(empty)", language=None, wrap_lines=True)

    st.subheader("Queries")
    st.dataframe(query_page.with_query_links(view.queries_frame(result), result["dataset"]), hide_index=True,
                 column_config={query_page.LINK_COLUMN: st.column_config.LinkColumn(display_text=query_page.LINK_TEXT)})
    by_qid = {q["qid"]: q for q in result["queries"]}
    qid = st.selectbox("Query", list(by_qid), format_func=lambda q: f"{q}: {by_qid[q]['query']}")
    query = by_qid[qid]
    st.link_button("Open this query on the Query page", query_page.query_link(result["dataset"], qid),
                   icon=":material/manage_search:")  # opens in its own tab
    st.text(f"Query: {query['query']}")
    if query["reason"]:
        st.text(f"Free-text reason (induction): {query['reason']}")
    for a in query["assigned"] or []:
        st.text(f"• {a['category']}: {a['justification']}")
    if query["status"] == view.UNKNOWN_CATEGORY:
        st.warning("Categories outside the typology: this query is left out of every validation figure.")
        st.text(view.unknown_category_text(query["unknown_categories"]))  # model output: plain text
        st.code(query["raw"] or "(empty answer)", language=None, wrap_lines=True)
    elif query["status"] in view.UNREADABLE_STATUSES:
        st.error(f"The model's answer was unreadable ({query['status']}): no reason could be read from it. "
                 "Its answer as given:")
        st.code(query["raw"] or "(empty answer)", language=None, wrap_lines=True)
    elif query["status"] is None:
        st.text("Not assigned yet (the run stopped before its assignment step).")
    elif not query["assigned"]:
        st.text("The model assigned no reason to this query.")
    st.page_link("pages/annotate-reasons.py", label="Annotate this query", icon=":material/rate_review:",
                 query_params={"dataset": dataset, "task": task, "qid": qid})

with st.expander("Run a typology (background job)"):
    st.caption("Runs `python -m pipeline typology` in the background: the job survives a closed tab, and every model "
               "call is cached, so a rerun resumes.")
    cols = st.columns(6)
    cols[0].selectbox("Dataset ", ["dl19", "dl20", "dl21", "dl22"], format_func=str.upper, key="job_dataset")
    cols[1].selectbox("Task ", ["h2r", "h2g", "h2j"], format_func=str.upper, key="job_task")
    cols[2].text_input("Model", "auto", help="auto, embedded, ollama[:MODEL[@HOST]], openai:MODEL@URL", key="job_llm")
    cols[3].number_input(view.forms.TYPOLOGY_QUERIES.label, value=6, key="job_max_queries")  # checked on Start
    cols[4].number_input(view.forms.TYPOLOGY_ROUNDS.label, value=view.DEFAULT_MAX_ROUNDS, key="job_max_rounds",
                         help="refinement rounds at most (--max-rounds); an imported typology has none")
    cols[5].checkbox("Study's categories", help="import the study's typology instead of inducing one",
                     key="job_study")
    st.text(view.model_note(st.session_state["job_llm"]))  # from the model's identity; the field is user text

    def queue() -> None:  # reads the widgets' state: a click may arrive with changed values
        s = st.session_state
        try:
            s["queued_typology"] = view.submit_typology(
                s["job_dataset"], s["job_task"], llm=s["job_llm"], max_queries=s["job_max_queries"],
                max_rounds=s["job_max_rounds"], typology="study" if s["job_study"] else None)
        except ValueError as exc:  # a bad field (core.fields.FormError): nothing was queued
            s["queued_typology_error"] = str(exc)

    st.button("Start", on_click=queue)
    if "queued_typology" in st.session_state:
        st.success(f"Queued job #{st.session_state.pop('queued_typology')}.")
    if "queued_typology_error" in st.session_state:
        st.error(st.session_state.pop("queued_typology_error"))


jobs_panel(view.TYPOLOGY, view.jobs_rows)  # outside the expander: always seen
