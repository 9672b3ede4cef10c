"""Findings: what the evidence says about the two papers' claims, and the files a paper can use."""
from functools import partial

import streamlit as st

from ltr.views import reader
from ltr.views import findings as ltr_findings
from pages import use_app_navigation
from pipeline.views import findings as view

use_app_navigation()


@st.cache_data(max_entries=8, show_spinner="Checking the failure paper's claims…")
def failure_findings(dataset: str, version: tuple):
    """Checked once per state of the stores they read (``version``: :func:`view.stores_version`)."""
    return view.check(dataset)


@st.cache_data(max_entries=8, show_spinner="Checking the LearnDCG claims…")
def ltr_result(store_path: str, experiment: str, version: tuple) -> dict:
    """Checked once per state of the experiment's completed runs (``version``: ``experiment_version``)."""
    with reader.open_store(store_path) as store:
        return ltr_findings.check(store, experiment)


def show(found, parts_frame, rule_line=None) -> None:
    """Each finding: its verdict, the paper's figure, its rule (``rule_line``: the section's view helper, where
    the claims state one) and the reason (text from the stores stays text), and its measured parts
    (``parts_frame``: the section's view helper; the failure paper's carry each verdict's headline)."""
    for finding in found:
        with st.expander(f"{finding.name}: {finding.verdict}",
                         expanded=finding.verdict != "not measurable here"):
            rule = f"\nrule: {rule_line(finding)}" if rule_line else ""
            st.text(f"claim: {finding.claim}\npaper: {finding.paper}{rule}\nreason: {finding.reason}")
            parts = parts_frame(finding)
            if not parts.empty:
                st.dataframe(parts, hide_index=True, width="stretch")


st.title("Findings")
st.caption("Each claim of the two papers checked on what the stores hold: the paper's figure, the measured figures, "
           "a verdict (holds / does not hold / inconclusive / not measurable here, with the reason) and what it "
           "rests on. Inconclusive: measured, but the evidence cannot carry a verdict (n under the claim's minimum, "
           "an interval that straddles the threshold, a sub-1B or unknown-size model, a universe under half of the "
           "judged queries). A verdict is never softened: one configuration against a claim makes it not hold.")

st.header("Query failure (pipeline findings)")
dataset = st.selectbox("Dataset", view.dataset_choices(), key="findings_dataset",
                       help="all: every TREC DL year (those without a study read 'not measurable here')")
found = failure_findings(dataset, view.stores_version(dataset))
st.dataframe(view.summary_frame(found), hide_index=True, width="stretch")
show(found, view.parts_frame, view.rule_line)
# downloads do not rerun the page (on_click="ignore"): a rerun replaced the deferred files the browser still
# pointed at, and after three downloads the comparison ZIP failed with "Deferred file ... not found" (issue 33)
c = st.columns(3)
c[0].download_button("Download findings (CSV)", partial(view.findings_csv, found),
                     file_name=f"findings-{dataset}.csv", mime="text/csv", on_click="ignore")
c[1].download_button("Download findings (LaTeX)", partial(view.findings_latex, found, dataset),
                     file_name=f"findings-{dataset}.tex", mime="text/x-tex", on_click="ignore")
c[2].download_button("Download findings (JSON)", partial(view.findings_json, found, dataset),
                     file_name=f"findings-{dataset}.json", mime="application/json", on_click="ignore")

st.subheader("Export a study")
export_dataset = dataset if dataset != "all" else st.selectbox(
    "Study dataset", [d for d in view.dataset_choices() if d != "all"], key="export_dataset")
studies = view.study_choices(export_dataset)
if studies:
    study_id = st.selectbox("Study (newest first)", studies, key="export_study")
    st.download_button("Download the study's figures and tables (ZIP)", partial(view.export_zip, export_dataset,
                                                                                 study_id),
                       file_name=f"export-{export_dataset}-{study_id}.zip", mime="application/zip", on_click="ignore",
                       help="what python -m pipeline export writes: Venn diagrams (SVG, PDF, PNG), overlap, "
                            "pairwise, stability and findings tables (CSV, LaTeX), the hard sets' per-query "
                            "CSVs and manifest.json")
else:
    st.info(f"No stored study for {export_dataset}: run one on the Failure overlap page.")

st.header("LearnDCG (ltr findings)")
with reader.session_store(st.session_state) as store:
    experiments = ltr_findings.experiments(store)
    if not experiments:
        st.info("No experiment with completed runs in the run store (python -m ltr grid --config ...).")
    else:
        experiment = st.selectbox("Experiment", experiments, key="ltr_experiment")
        result = ltr_result(str(store.path), experiment, ltr_findings.experiment_version(store, experiment))
        st.caption(f"Test: {result['test']}")
        st.dataframe(ltr_findings.summary_frame(result), hide_index=True, width="stretch")
        show(result["findings"].values(), ltr_findings.parts_frame)
        st.subheader("θ_d and b_d per fold and seed")
        st.caption("b_d = 1 + softplus(θ_d), the discount's log base, is the quantity compared with the paper's "
                   "1.80–2.15 (the claims file says why): the folds are compared on b_d tested (at the checkpoint "
                   "that was tested) where the runs recorded it, else on b_d final (the last step); b_d start is "
                   "where the run began. of_reference: the share of pure drift used (ltr.drift).")
        st.dataframe(ltr_findings.theta_frame(result), hide_index=True, width="stretch")
        st.subheader("Cost ranking behind the NDCG-vs-time scatter")
        st.dataframe(ltr_findings.cost_frame(result), hide_index=True, width="stretch")
        st.caption(ltr_findings.COST_CAPTION)
        c = st.columns(3)
        c[0].download_button("Download LearnDCG findings (CSV)", partial(ltr_findings.findings_csv, result),
                             file_name=f"ltr-findings-{ltr_findings.file_stem(experiment)}.csv", mime="text/csv", on_click="ignore")
        c[1].download_button("Download LearnDCG findings (LaTeX)", partial(ltr_findings.findings_latex, result),
                             file_name=f"ltr-findings-{ltr_findings.file_stem(experiment)}.tex", mime="text/x-tex", on_click="ignore")
        c[2].download_button("Download LearnDCG findings (JSON)", partial(ltr_findings.findings_json, result),
                             file_name=f"ltr-findings-{ltr_findings.file_stem(experiment)}.json",
                             mime="application/json", on_click="ignore")
        if not ltr_findings.exportable(experiment):
            st.info("The comparison export (python -m ltr export) takes a named experiment: train these runs "
                    "in a grid (python -m ltr grid) to export them.")
        else:
            pairs = ltr_findings.comparisons(store, experiment)
            data, model = st.selectbox("Comparison to export", pairs, format_func=lambda p: f"{ltr_findings.display_name(p[0])} / {p[1]}",
                                       key="ltr_export_pair")
            st.download_button("Download the comparison's figures and tables (ZIP)",
                               partial(ltr_findings.export_zip, str(store.path), data, model, experiment),
                               file_name=f"ltr-export-{ltr_findings.file_stem(experiment)}.zip", mime="application/zip",
                               on_click="ignore",
                               help="what python -m ltr export writes: the NDCG-vs-time scatter and θ_d per fold "
                                    "(SVG, PDF, PNG), significance, cost, drift and findings tables (CSV, LaTeX), "
                                    "manifest.json")
